package authz_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
)

// The roles of the RBAC table's columns; the user holds the workspace roles
// in workspace own (10), the cluster-wide ones everywhere, none nothing.
var roleColumns = []authz.Role{authz.ModelRegistryViewer, authz.Viewer, authz.EditorRestricted, authz.Editor,
	authz.WorkspaceAdmin, authz.WorkspaceCreator, authz.ClusterAdmin, ""}

const own, otherWS = 10, 20

// roleActor is carol (not the owner of anything, not an administrator)
// holding role r: in workspace own, or cluster-wide for the roles that are
// only assigned so.
func roleActor(r authz.Role) authz.Actor {
	carol := resolute.User{ID: 4, Username: "carol", Active: true}
	p := authz.Permissions{Workspaces: map[int64][]authz.Role{}}
	switch info, _ := authz.RoleByName(string(r)); {
	case r == "":
	case info.GlobalOnly:
		p.Global = []authz.Role{r}
	default:
		p.Workspaces[own] = []authz.Role{r}
	}
	return authz.RBACUser(carol, p)
}

// TestRBACAnswersEveryActionForEveryRoleInOwnAndOtherWorkspace is the
// permission table under RBAC: each row an action on an object (owned by
// alice, so that ownership cannot be what answers), and for each role its
// answer in the workspace where the role is held and in another, as
// "own/other". The answers are Determined's pre-canned roles: a Viewer
// reads; an EditorRestricted also edits projects, experiments, models and
// templates and opens notebooks (not shells); an Editor also launches and changes
// notebooks, shells, commands and TensorBoards; a WorkspaceAdmin also
// changes the workspace and assigns roles in it; a WorkspaceCreator only
// creates workspaces; a ClusterAdmin does everything everywhere.
func TestRBACAnswersEveryActionForEveryRoleInOwnAndOtherWorkspace(t *testing.T) {
	in := func(ws int64) resolute.Experiment {
		return resolute.Experiment{ID: 7, UserID: owner.ID, Username: owner.Username, WorkspaceID: ws}
	}
	objects := map[string]func(ws int64) authz.Object{
		"workspace": func(ws int64) authz.Object {
			return authz.Workspace(resolute.Workspace{ID: ws, Name: "w", UserID: owner.ID})
		},
		"project": func(ws int64) authz.Object {
			return authz.Project(resolute.Project{Name: "p", UserID: owner.ID, WorkspaceID: ws}, owner.ID)
		},
		"experiment": func(ws int64) authz.Object { return authz.Experiment(in(ws)) },
		"trial":      func(ws int64) authz.Object { return authz.Trial(trial, in(ws)) },
		"checkpoint": func(ws int64) authz.Object {
			return authz.Checkpoint(resolute.Checkpoint{UUID: "c", TrialID: 27, ExperimentID: 7}, in(ws))
		},
		"notebook": func(ws int64) authz.Object {
			return authz.Task(resolute.Task{ID: "notebook-4", Type: resolute.TaskNotebook, UserID: owner.ID, WorkspaceID: ws})
		},
		"shell": func(ws int64) authz.Object {
			return authz.Task(resolute.Task{ID: "shell-6", Type: resolute.TaskShell, UserID: owner.ID, WorkspaceID: ws})
		},
		"tensorboard": func(ws int64) authz.Object {
			return authz.Task(resolute.Task{ID: "tensorboard-5", Type: resolute.TaskTensorBoard, UserID: owner.ID, WorkspaceID: ws})
		},
		"experiment job": func(ws int64) authz.Object { return authz.Job("experiment-7", owner.ID, owner.Username, ws) },
		"notebook job":   func(ws int64) authz.Object { return authz.Job("notebook-4", owner.ID, owner.Username, ws) },
		"model": func(ws int64) authz.Object {
			return authz.Model(resolute.Model{Name: "m", UserID: owner.ID, WorkspaceID: ws})
		},
		"template": func(ws int64) authz.Object {
			return authz.Template(resolute.Template{Name: "t", UserID: owner.ID, WorkspaceID: ws})
		},
		"new in workspace": authz.InWorkspace,
		"cluster":          func(int64) authz.Object { return authz.Cluster },
		"alice's account":  func(int64) authz.Object { return authz.UserAccount(owner) },
		"carol's account": func(int64) authz.Object {
			return authz.UserAccount(resolute.User{ID: 4, Username: "carol"})
		},
	}
	const (
		all  = "ok/ok"
		here = "ok/no"
		none = "no/no"
	)
	//               MRViewer Viewer ERestr Editor WSAdmin WSCreator CAdmin nothing
	tests := map[string]struct {
		action authz.Action
		object string
		want   []string
	}{
		"a workspace is read by its viewers and up":            {authz.Read, "workspace", []string{none, here, here, here, here, none, all, none}},
		"a project is read by its workspace's viewers":         {authz.Read, "project", []string{none, here, here, here, here, none, all, none}},
		"an experiment is read by its workspace's viewers":     {authz.Read, "experiment", []string{none, here, here, here, here, none, all, none}},
		"a trial is read as its experiment":                    {authz.Read, "trial", []string{none, here, here, here, here, none, all, none}},
		"a checkpoint is read as its experiment":               {authz.Read, "checkpoint", []string{none, here, here, here, here, none, all, none}},
		"a notebook is read by viewers":                        {authz.Read, "notebook", []string{none, here, here, here, here, none, all, none}},
		"a model is read by model registry viewers too":        {authz.Read, "model", []string{here, here, here, here, here, none, all, none}},
		"a template is read by viewers":                        {authz.Read, "template", []string{none, here, here, here, here, none, all, none}},
		"users and the cluster are read by everyone":           {authz.Read, "alice's account", []string{all, all, all, all, all, all, all, all}},
		"only workspace creators create workspaces":            {authz.CreateWorkspace, "cluster", []string{none, none, none, none, none, all, all, none}},
		"projects are created by restricted editors and up":    {authz.CreateProject, "new in workspace", []string{none, none, here, here, here, none, all, none}},
		"experiments are created by restricted editors and up": {authz.CreateExperiment, "new in workspace", []string{none, none, here, here, here, none, all, none}},
		"tasks (NTSC) are launched by editors, not restricted": {authz.CreateTask, "new in workspace", []string{none, none, none, here, here, none, all, none}},
		"models are created by restricted editors and up":      {authz.CreateModel, "new in workspace", []string{none, none, here, here, here, none, all, none}},
		"templates are created by restricted editors and up":   {authz.CreateTemplate, "new in workspace", []string{none, none, here, here, here, none, all, none}},
		"a workspace is changed by its admins":                 {authz.ChangeWorkspace, "workspace", []string{none, none, none, none, here, none, all, none}},
		"a project is changed by restricted editors and up":    {authz.ChangeProject, "project", []string{none, none, here, here, here, none, all, none}},
		"anyone's experiment is changed by restricted editors": {authz.ChangeExperiment, "experiment", []string{none, none, here, here, here, none, all, none}},
		"a checkpoint is changed as its experiment":            {authz.ChangeCheckpoint, "checkpoint", []string{none, none, here, here, here, none, all, none}},
		"a run's metadata is set as its experiment":            {authz.ChangeRunMetadata, "trial", []string{none, none, here, here, here, none, all, none}},
		"a notebook is killed by editors":                      {authz.ChangeTask, "notebook", []string{none, none, none, here, here, none, all, none}},
		"a notebook is opened by restricted editors and up":    {authz.OpenTask, "notebook", []string{none, none, here, here, here, none, all, none}},
		"a shell is opened by editors, not restricted":         {authz.OpenTask, "shell", []string{none, none, none, here, here, none, all, none}},
		"the cluster's usage is read by cluster admins":        {authz.ReadUsage, "cluster", []string{none, none, none, none, none, none, all, none}},
		"a TensorBoard is opened by its viewers":               {authz.OpenTask, "tensorboard", []string{none, here, here, here, here, none, all, none}},
		"an experiment's job is moved by restricted editors":   {authz.ChangeJob, "experiment job", []string{none, none, here, here, here, none, all, none}},
		"a notebook's job is moved by editors":                 {authz.ChangeJob, "notebook job", []string{none, none, none, here, here, none, all, none}},
		"a model is changed by restricted editors and up":      {authz.ChangeModel, "model", []string{none, none, here, here, here, none, all, none}},
		"a template is changed by restricted editors and up":   {authz.ChangeTemplate, "template", []string{none, none, here, here, here, none, all, none}},
		"no role reports for a trial":                          {authz.Report, "trial", []string{none, none, none, none, none, none, none, none}},
		"another's account is changed by cluster admins":       {authz.ChangeUser, "alice's account", []string{none, none, none, none, none, none, all, none}},
		"one's own account by oneself":                         {authz.ChangeUser, "carol's account", []string{all, all, all, all, all, all, all, all}},
		"only cluster admins administer":                       {authz.Administer, "cluster", []string{none, none, none, none, none, none, all, none}},
		"roles in a workspace are assigned by its admins":      {authz.AssignRoles, "workspace", []string{none, none, none, none, here, none, all, none}},
		"cluster-wide roles are assigned by cluster admins":    {authz.AssignRoles, "cluster", []string{none, none, none, none, none, none, all, none}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range roleColumns {
				a := roleActor(r)
				got = append(got, answerShort(authz.Can(a, tt.action, objects[tt.object](own)))+"/"+
					answerShort(authz.Can(a, tt.action, objects[tt.object](otherWS))))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answers (-want +got), columns %v:\n%s", roleColumns, diff)
			}
		})
	}
}

func answerShort(err error) string {
	if err == nil {
		return "ok"
	}
	if resolute.ErrorCode(err) != resolute.EForbidden {
		return resolute.ErrorCode(err)
	}
	return "no"
}

func TestUnderRBACOwningGivesNothingAndAdminsAreClusterAdmins(t *testing.T) {
	mine := authz.Experiment(resolute.Experiment{ID: 7, UserID: owner.ID, Username: owner.Username, WorkspaceID: own})
	if err := authz.Can(authz.RBACUser(owner, authz.Permissions{}), authz.ChangeExperiment, mine); err == nil {
		t.Error("the owner without a role changed their experiment")
	}
	if err := authz.Can(authz.RBACUser(admin, authz.Permissions{}), authz.ChangeExperiment, mine); err != nil {
		t.Errorf("an administrator under RBAC: %v", err)
	}
	if err := authz.Can(authz.RBACUser(inactive, authz.Permissions{Global: []authz.Role{authz.ClusterAdmin}}), authz.Read, mine); resolute.ErrorCode(err) != resolute.EUnauthorized {
		t.Errorf("a deactivated ClusterAdmin: %v", err)
	}
}

func TestRefusalsUnderRBACNameTheMissingPermission(t *testing.T) {
	err := authz.Can(roleActor(authz.Viewer), authz.CreateExperiment, authz.InWorkspace(own))
	msg := resolute.ErrorMessage(err)
	if !strings.Contains(msg, "carol") || !strings.Contains(msg, string(authz.CreateExperiments)) {
		t.Errorf("message = %q", msg)
	}
}

func TestVisibleFiltersOnlyUsersWithoutAClusterWideRole(t *testing.T) {
	tests := map[string]struct {
		actor authz.Actor
		want  authz.Visibility
	}{
		"basic authorization shows all":     {authz.User(other), authz.Visibility{All: true}},
		"the system sees all":               {authz.System, authz.Visibility{All: true}},
		"a cluster-wide viewer sees all":    {authz.RBACUser(other, authz.Permissions{Global: []authz.Role{authz.Viewer}}), authz.Visibility{All: true}},
		"an administrator sees all":         {authz.RBACUser(admin, authz.Permissions{}), authz.Visibility{All: true}},
		"a workspace viewer is filtered":    {roleActor(authz.Viewer), authz.Visibility{UserID: 4, Roles: authz.RolesGranting(authz.ViewExperiment)}},
		"an allocation sees nothing listed": {authz.Allocation(ownTask), authz.Visibility{Roles: []string{}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, authz.Visible(tt.actor, authz.ViewExperiment)); diff != "" {
				t.Error(diff)
			}
		})
	}
	want := []string{"ClusterAdmin", "Editor", "EditorRestricted", "Viewer", "WorkspaceAdmin"}
	if got := authz.RolesGranting(authz.ViewExperiment); !slices.Equal(got, want) {
		t.Errorf("roles that read experiments = %v, want %v", got, want)
	}
}

func TestRolesAreDeterminedsWithTheirIDs(t *testing.T) {
	var got []string
	for _, r := range authz.Roles() {
		got = append(got, string(r.Name))
	}
	want := []string{"ClusterAdmin", "WorkspaceAdmin", "WorkspaceCreator", "Viewer", "Editor", "ModelRegistryViewer", "EditorRestricted"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if r, ok := authz.RoleByName("4"); !ok || r.Name != authz.Viewer {
		t.Errorf("role 4 = %v, %v", r, ok)
	}
}
