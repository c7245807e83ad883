// Package authz decides who may do what: Can(actor, action, object) is the
// one place where Resolute's permission rules live. Every service method in
// control/ asks it, inside the transaction that writes, before it changes
// anything; handlers never decide permissions themselves.
//
// The rules are Determined's open-source ones:
//   - every signed-in user may read everything and create workspaces,
//     projects, experiments, tasks, models and templates;
//   - an object's owner and administrators may change and delete it (a
//     project also by its workspace's owner);
//   - managing users and reading the master's logs are for administrators;
//   - a task's allocation (its token) reaches only its own trial or task;
//   - the system (the master itself) may do anything.
//
// Under RBAC (security.authz.type: rbac) a user's Actor carries the roles
// they hold, cluster-wide and per workspace (RBACUser), and the same
// function answers from those instead (rbac.go): ownership no longer
// counts, the role held in the object's workspace does. The package must
// not read the database or know about HTTP: callers load the object and
// the actor's roles and pass what the rule needs.
package authz

import (
	"fmt"
	"slices"

	"github.com/resolute-ml/resolute"
)

// Actor is who asks: a signed-in user, a task's allocation, or the system.
// The zero Actor is anonymous and may do nothing.
type Actor struct {
	user       *resolute.User
	allocation *resolute.Allocation
	// experimentID is the experiment of a trial's allocation, whose
	// experiment and checkpoints it may read (a warm start, the best
	// validation so far); 0 for other allocations.
	experimentID int64
	system       bool
	// perms are a user's roles under RBAC; nil under basic authorization.
	perms *Permissions
}

// User is the actor of a signed-in user.
func User(u resolute.User) Actor { return Actor{user: &u} }

// RBACUser is the actor of a signed-in user under RBAC, holding the roles
// p. An administrator (the user's admin flag) holds ClusterAdmin too.
func RBACUser(u resolute.User, p Permissions) Actor {
	if u.Admin && !slices.Contains(p.Global, ClusterAdmin) {
		p.Global = append(slices.Clone(p.Global), ClusterAdmin)
	}
	return Actor{user: &u, perms: &p}
}

// RBAC says whether the actor is a user under RBAC, and their roles.
func (a Actor) RBAC() (Permissions, bool) {
	if a.perms == nil {
		return Permissions{}, false
	}
	return *a.perms, true
}

// Allocation is the actor of a running task's allocation token.
func Allocation(a resolute.Allocation) Actor { return Actor{allocation: &a} }

// TrialAllocation is the actor of a running trial's allocation token; the
// trial belongs to experiment experimentID.
func TrialAllocation(a resolute.Allocation, experimentID int64) Actor {
	return Actor{allocation: &a, experimentID: experimentID}
}

// System is the master acting on its own: schedulers, recovery, idle
// timeouts, garbage collection.
var System = Actor{system: true}

// UserID is the id of the actor's user; 0 for an allocation, the system or
// nobody.
func (a Actor) UserID() int64 {
	if a.user == nil {
		return 0
	}
	return a.user.ID
}

// Username is the name of the actor's user, or what the actor is.
func (a Actor) Username() string {
	switch {
	case a.user != nil:
		return a.user.Username
	case a.allocation != nil:
		return "allocation " + a.allocation.ID
	case a.system:
		return "system"
	}
	return "anonymous"
}

// Action is something an actor asks to do to an object.
type Action string

// The actions. Each belongs to one rule in Can.
const (
	// Read is seeing an object: every signed-in user; an allocation only
	// its own trial or task.
	Read Action = "read"

	// Create* add an object: every signed-in user.
	CreateWorkspace  Action = "create workspace"
	CreateProject    Action = "create project"
	CreateExperiment Action = "create experiment"
	CreateTask       Action = "create task"
	CreateModel      Action = "create model"
	CreateTemplate   Action = "create template"

	// Change* change or delete an object: its owner or an administrator.
	ChangeWorkspace  Action = "change workspace"
	ChangeProject    Action = "change project" // also the workspace's owner
	ChangeExperiment Action = "change experiment"
	ChangeTask       Action = "change task" // kill it, set its priority
	// OpenTask opens a task's web page, terminal, SSH or proxy ports:
	// under basic as ChangeTask; under RBAC a TensorBoard is opened by its
	// viewers, a notebook or command by EditorRestricted and above, a
	// shell (a login to run anything) by Editors and above, who may launch
	// one.
	OpenTask       Action = "open task"
	ChangeJob      Action = "change job" // its place, priority, weight and pool in the queue
	ChangeModel    Action = "change model"
	ChangeTemplate Action = "change template"
	// ChangeCheckpoint records that a checkpoint's files were deleted: the
	// experiment's owner, an administrator, or the allocation of its trial.
	ChangeCheckpoint Action = "change checkpoint"
	// ChangeRunMetadata sets a trial's run metadata: the experiment's
	// owner, an administrator, or the trial's own allocation.
	ChangeRunMetadata Action = "change run metadata"

	// Report is what a task says of itself (metrics, progress, checkpoints,
	// early exit, runner state, rendezvous): only its own allocation.
	Report Action = "report"

	// ChangeUser changes an account: an administrator, or the user
	// themselves for their own password and display name.
	ChangeUser Action = "change user"

	// Administer is what only administrators may do: add users, change
	// anyone's admin flag, read the master's logs.
	Administer Action = "administer"

	// ReadUsage reads the cluster's historical usage by user and
	// workspace: every signed-in user under basic; under RBAC a
	// ClusterAdmin, as Determined's PERMISSION_TYPE_VIEW_CLUSTER_USAGE.
	ReadUsage Action = "read usage"

	// AssignRoles grants and revokes roles in a workspace (the object) or
	// cluster-wide (Cluster): administrators; under RBAC also a
	// WorkspaceAdmin of that workspace.
	AssignRoles Action = "assign roles"
)

// Object is what an action is asked of, with what the rules read.
type Object struct {
	// Kind and Name name it in messages: "workspace", `"team-a"`.
	Kind string
	Name string
	// OwnerID and Owner are its owner's id and username.
	OwnerID int64
	Owner   string
	// CoOwnerID is another user who may change it: a project's workspace's
	// owner. 0 when none.
	CoOwnerID int64
	// TaskID is the task it belongs to (a trial's "trial-N", a notebook's
	// id), which that task's allocations may read and report for.
	TaskID string
	// AllocationID, when set, is the one allocation that may report for
	// it (an allocation's own signals and rendezvous), not the task's
	// other runs.
	AllocationID string
	// ExperimentID is the experiment it is or belongs to, when the
	// allocations of that experiment's trials may read it (the experiment
	// itself and its checkpoints; not its other trials).
	ExperimentID int64
	// WorkspaceID is the workspace it is or belongs to, whose roles RBAC
	// reads; 0 for what belongs to none (users, the cluster).
	WorkspaceID int64
	// TaskType is a task's type (or a job's, "" for an experiment's): RBAC
	// tells notebooks, shells, commands and TensorBoards from experiments.
	TaskType string
}

// Can answers nil when the actor may do the action to the object, or an
// error whose message says why not: EUnauthorized for nobody, EForbidden
// otherwise.
func Can(a Actor, act Action, o Object) error {
	switch {
	case a.system:
		return nil
	case a.allocation != nil:
		return allocationCan(*a.allocation, a.experimentID, act, o)
	case a.user == nil:
		return resolute.Errorf(resolute.EUnauthorized, "not signed in")
	case !a.user.Active:
		return resolute.Errorf(resolute.EUnauthorized, "user %s is deactivated", a.user.Username)
	}
	u := *a.user
	if a.perms != nil {
		return rbacCan(u, a.perms, act, o)
	}
	switch act {
	case Read, ReadUsage, CreateWorkspace, CreateProject, CreateExperiment, CreateTask, CreateModel, CreateTemplate:
		return nil
	case ChangeWorkspace, ChangeProject, ChangeExperiment, ChangeTask, OpenTask, ChangeJob, ChangeModel, ChangeTemplate,
		ChangeCheckpoint, ChangeRunMetadata:
		if u.Admin || u.ID == o.OwnerID || o.CoOwnerID != 0 && u.ID == o.CoOwnerID {
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "%s belongs to %s; only they or an administrator may change it", o.label(), o.owner())
	case Report:
		return resolute.Errorf(resolute.EForbidden, "only %s's own task may report for it", o.label())
	case ChangeUser:
		if u.Admin || u.ID == o.OwnerID {
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "only administrators may change another user's account")
	case Administer, AssignRoles:
		if u.Admin {
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "only administrators may do this")
	}
	return resolute.Errorf(resolute.EForbidden, "%q is not an action Resolute knows", string(act))
}

// allocationCan: a task's token reaches its own trial or task, to read it
// and report for it, and, for a trial's, read its experiment and that
// experiment's checkpoints; nothing else.
func allocationCan(al resolute.Allocation, experimentID int64, act Action, o Object) error {
	if act == Read && o.ExperimentID != 0 && o.ExperimentID == experimentID {
		return nil
	}
	switch act {
	case Read, Report, ChangeCheckpoint, ChangeRunMetadata:
		if o.TaskID != "" && o.TaskID == al.TaskID && (o.AllocationID == "" || o.AllocationID == al.ID) {
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "this allocation is not %s's; it may not %s it", o.label(), verb(act))
	}
	return resolute.Errorf(resolute.EForbidden, "a task's allocation token may not %s; sign in as a user", string(act))
}

func verb(act Action) string {
	switch act {
	case Report:
		return "report for"
	case ChangeCheckpoint, ChangeRunMetadata:
		return "change"
	}
	return string(act)
}

func (o Object) label() string {
	switch {
	case o.Kind == "":
		return "it"
	case o.Name == "":
		return o.Kind
	}
	return o.Kind + " " + o.Name
}

func (o Object) owner() string {
	if o.Owner == "" {
		return fmt.Sprintf("user %d", o.OwnerID)
	}
	return o.Owner
}
