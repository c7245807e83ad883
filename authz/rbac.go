package authz

import (
	"github.com/resolute-ml/resolute"
)

// rbacCan is Can for a user under RBAC: the action needs a permission,
// which a role held cluster-wide or in the object's workspace must grant.
// Ownership gives nothing; a user still changes their own account.
func rbacCan(u resolute.User, p *Permissions, act Action, o Object) error {
	switch act {
	case Report:
		return resolute.Errorf(resolute.EForbidden, "only %s's own task may report for it", o.label())
	case ChangeUser:
		if u.ID == o.OwnerID || p.has(AdministrateUsers, 0) {
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "only a ClusterAdmin may change another user's account")
	}
	perm, ok := permissionFor(act, o)
	if !ok {
		return resolute.Errorf(resolute.EForbidden, "%q is not an action Resolute knows", string(act))
	}
	if perm == "" || p.has(perm, o.WorkspaceID) {
		return nil
	}
	where := "cluster-wide"
	if o.WorkspaceID != 0 {
		where = "in " + o.label() + "'s workspace"
		if o.Kind == "workspace" {
			where = "in " + o.label()
		}
	}
	return resolute.Errorf(resolute.EForbidden, "%s holds no role %s that grants %s (to %s %s)", u.Username, where, perm,
		string(act), o.label())
}

// permissionFor is the permission an action on o needs under RBAC; "" when
// every signed-in user may (reading users and the cluster); false for an
// action Resolute does not know.
func permissionFor(act Action, o Object) (Permission, bool) {
	switch act {
	case Read:
		return ViewPermission(o.Kind, o.TaskType), true
	case CreateWorkspace:
		return CreateWorkspaces, true
	case CreateProject:
		return CreateProjects, true
	case CreateExperiment:
		return CreateExperiments, true
	case CreateTask:
		return CreateNSC, true
	case CreateModel:
		return CreateModels, true
	case CreateTemplate:
		return CreateTemplates, true
	case ChangeWorkspace:
		return UpdateWorkspace, true
	case ChangeProject:
		return UpdateProjects, true
	case ChangeExperiment, ChangeCheckpoint, ChangeRunMetadata:
		return UpdateExperiments, true
	case ChangeTask:
		return UpdateNSC, true
	case OpenTask:
		switch o.TaskType {
		case resolute.TaskTensorBoard:
			return ViewNSC, true
		case resolute.TaskShell:
			return UpdateNSC, true
		}
		return UseNSC, true
	case ChangeJob:
		if o.TaskType == "" {
			return UpdateExperiments, true
		}
		return UpdateNSC, true
	case ChangeModel:
		return EditModels, true
	case ChangeTemplate:
		return UpdateTemplates, true
	case AssignRoles:
		return AssignRolesIn, true
	case Administer:
		return AdministrateUsers, true
	case ReadUsage:
		return ViewClusterUsage, true
	}
	return "", false
}

// ViewPermission is the permission that reading an object of kind needs
// under RBAC (a task's or job's type tells tasks from experiments); "" for
// what every signed-in user reads.
func ViewPermission(kind, taskType string) Permission {
	switch kind {
	case "workspace":
		return ViewWorkspace
	case "project":
		return ViewProject
	case "experiment", "trial", "checkpoint":
		return ViewExperiment
	case "task":
		return ViewNSC
	case "job":
		if taskType == "" {
			return ViewExperiment
		}
		return ViewNSC
	case "model":
		return ViewModelRegistry
	case "template":
		return ViewTemplates
	}
	return ""
}

// Visibility is how a list is filtered for an actor: All, or only the
// objects in workspaces where UserID holds one of Roles (a SQL semi-join on
// role_holders, never a loop over rows).
type Visibility struct {
	All    bool
	UserID int64
	Roles  []string
}

// Visible is what of a list of objects that need permission perm to be
// read the actor sees: everything under basic authorization, for the
// system, and for a role that grants perm cluster-wide; otherwise the
// workspaces where the actor's roles grant it, and nothing for an
// allocation or nobody.
func Visible(a Actor, perm Permission) Visibility {
	switch {
	case a.system:
		return Visibility{All: true}
	case a.user == nil:
		return Visibility{Roles: []string{}}
	case a.perms == nil:
		return Visibility{All: true}
	case perm == "" || a.perms.has(perm, 0):
		return Visibility{All: true}
	}
	return Visibility{UserID: a.user.ID, Roles: RolesGranting(perm)}
}

// Sees says whether v shows an object of workspace ws, for the few lists
// that live in memory (the job queue): the same rule as the SQL filter,
// with the actor's roles at hand.
func (a Actor) Sees(perm Permission, ws int64) bool {
	if Visible(a, perm).All {
		return true
	}
	return a.perms != nil && a.perms.has(perm, ws)
}
