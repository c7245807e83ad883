package authz_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
)

var (
	owner = resolute.User{ID: 2, Username: "alice", Active: true}
	other = resolute.User{ID: 3, Username: "bob", Active: true}
	admin = resolute.User{ID: 1, Username: "admin", Admin: true, Active: true}
	// wsOwner owns the workspace of the project under test.
	wsOwner  = resolute.User{ID: 4, Username: "carol", Active: true}
	inactive = resolute.User{ID: 5, Username: "dave", Active: false}

	exp     = resolute.Experiment{ID: 7, UserID: owner.ID, Username: owner.Username}
	trial   = resolute.Trial{ID: 27, ExperimentID: 7}
	ownTask = resolute.Allocation{ID: "trial-27.1", TaskID: "trial-27"}
	another = resolute.Allocation{ID: "trial-28.1", TaskID: "trial-28"}
)

// The actors, in the order of each row's answers.
var actors = []struct {
	name  string
	actor authz.Actor
}{
	{"anonymous", authz.Actor{}},
	{"other user", authz.User(other)},
	{"owner", authz.User(owner)},
	{"admin", authz.User(admin)},
	{"own allocation", authz.TrialAllocation(ownTask, exp.ID)},
	{"other allocation", authz.TrialAllocation(another, exp.ID+1)},
	{"system", authz.System},
	{"deactivated owner", authz.User(resolute.User{ID: owner.ID, Username: owner.Username})},
}

// TestCanAnswersEveryActionForEveryActor is the permission table: each row is
// an action on an object owned by alice, and its answer for each actor
// (ok, or the error code).
func TestCanAnswersEveryActionForEveryActor(t *testing.T) {
	trialObj := authz.Trial(trial, exp)
	const (
		ok  = "ok"
		no  = resolute.EForbidden
		who = resolute.EUnauthorized
	)
	tests := map[string]struct {
		action authz.Action
		object authz.Object
		want   []string // anonymous, other, owner, admin, own alloc, other alloc, system, deactivated
	}{
		"everyone signed in reads an experiment, its trials' tasks too": {authz.Read, authz.Experiment(exp), []string{who, ok, ok, ok, ok, no, ok, who}},
		"a trial's task reads its experiment's checkpoints": {authz.Read, authz.Checkpoint(resolute.Checkpoint{UUID: "c", TrialID: 99, ExperimentID: exp.ID}, exp),
			[]string{who, ok, ok, ok, ok, no, ok, who}},
		"but not its experiment's other trials": {authz.Read, authz.Trial(resolute.Trial{ID: 99, ExperimentID: exp.ID}, exp),
			[]string{who, ok, ok, ok, no, no, ok, who}},
		"a trial is read by its own task too":               {authz.Read, trialObj, []string{who, ok, ok, ok, ok, no, ok, who}},
		"anyone signed in creates a workspace":              {authz.CreateWorkspace, authz.Cluster, []string{who, ok, ok, ok, no, no, ok, who}},
		"anyone signed in creates a project":                {authz.CreateProject, authz.Workspace(resolute.Workspace{UserID: admin.ID}), []string{who, ok, ok, ok, no, no, ok, who}},
		"anyone signed in creates an experiment":            {authz.CreateExperiment, authz.Cluster, []string{who, ok, ok, ok, no, no, ok, who}},
		"anyone signed in creates a task":                   {authz.CreateTask, authz.Cluster, []string{who, ok, ok, ok, no, no, ok, who}},
		"anyone signed in creates a model":                  {authz.CreateModel, authz.Cluster, []string{who, ok, ok, ok, no, no, ok, who}},
		"anyone signed in creates a template":               {authz.CreateTemplate, authz.Cluster, []string{who, ok, ok, ok, no, no, ok, who}},
		"owner or admin changes a workspace":                {authz.ChangeWorkspace, authz.Workspace(resolute.Workspace{Name: "w", UserID: owner.ID}), []string{who, no, ok, ok, no, no, ok, who}},
		"owner, workspace owner or admin changes a project": {authz.ChangeProject, authz.Project(resolute.Project{Name: "p", UserID: owner.ID}, wsOwner.ID), []string{who, no, ok, ok, no, no, ok, who}},
		"owner or admin changes an experiment":              {authz.ChangeExperiment, authz.Experiment(exp), []string{who, no, ok, ok, no, no, ok, who}},
		"owner or admin changes a task":                     {authz.ChangeTask, authz.Task(resolute.Task{ID: "notebook-4", UserID: owner.ID}), []string{who, no, ok, ok, no, no, ok, who}},
		"owner or admin moves a job":                        {authz.ChangeJob, authz.Job("experiment-7", owner.ID, owner.Username, 0), []string{who, no, ok, ok, no, no, ok, who}},
		"owner or admin changes a model":                    {authz.ChangeModel, authz.Model(resolute.Model{Name: "m", UserID: owner.ID}), []string{who, no, ok, ok, no, no, ok, who}},
		"owner or admin changes a template":                 {authz.ChangeTemplate, authz.Template(resolute.Template{Name: "t", UserID: owner.ID}), []string{who, no, ok, ok, no, no, ok, who}},
		"a checkpoint is changed by its trial's task too":   {authz.ChangeCheckpoint, authz.Checkpoint(resolute.Checkpoint{UUID: "c", TrialID: 27}, exp), []string{who, no, ok, ok, ok, no, ok, who}},
		"a run's metadata is set by its trial's task too":   {authz.ChangeRunMetadata, trialObj, []string{who, no, ok, ok, ok, no, ok, who}},
		"only a trial's own task reports for it":            {authz.Report, trialObj, []string{who, no, no, no, ok, no, ok, who}},
		"a user changes their own account, admin any":       {authz.ChangeUser, authz.UserAccount(owner), []string{who, no, ok, ok, no, no, ok, who}},
		"an allocation reports only for itself":             {authz.Report, authz.AllocationOf(ownTask), []string{who, no, no, no, ok, no, ok, who}},
		"only administrators administer":                    {authz.Administer, authz.Cluster, []string{who, no, no, ok, no, no, ok, who}},
		"owner or admin opens a task":                       {authz.OpenTask, authz.Task(resolute.Task{ID: "notebook-4", UserID: owner.ID}), []string{who, no, ok, ok, no, no, ok, who}},
		"only administrators assign roles":                  {authz.AssignRoles, authz.Cluster, []string{who, no, no, ok, no, no, ok, who}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, a := range actors {
				got = append(got, answer(authz.Can(a.actor, tt.action, tt.object)))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answers (-want +got), columns %s:\n%s", actorNames(), diff)
			}
		})
	}
}

func TestAProjectsWorkspaceOwnerMayChangeIt(t *testing.T) {
	p := authz.Project(resolute.Project{Name: "p", UserID: owner.ID}, wsOwner.ID)
	if err := authz.Can(authz.User(wsOwner), authz.ChangeProject, p); err != nil {
		t.Fatalf("workspace owner: %v", err)
	}
	// A project in a workspace nobody else owns has no co-owner: user 0 is
	// nobody, never a match.
	p = authz.Project(resolute.Project{Name: "p", UserID: owner.ID}, 0)
	if err := authz.Can(authz.User(resolute.User{Username: "zero", Active: true}), authz.ChangeProject, p); err == nil {
		t.Fatal("a user with id 0 matched an empty co-owner")
	}
}

func TestRefusalsSaySentencesNamingTheObjectAndOwner(t *testing.T) {
	err := authz.Can(authz.User(other), authz.ChangeWorkspace, authz.Workspace(resolute.Workspace{Name: "team-a", UserID: owner.ID, Username: "alice"}))
	want := `workspace "team-a" belongs to alice; only they or an administrator may change it`
	if got := resolute.ErrorMessage(err); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	err = authz.Can(authz.Allocation(another), authz.Report, authz.Trial(trial, exp))
	if got := resolute.ErrorMessage(err); got != "this allocation is not trial 27's; it may not report for it" {
		t.Errorf("allocation message = %q", got)
	}
}

func TestAnEarlierRunOfTheSameTaskIsNotTheAllocation(t *testing.T) {
	earlier := resolute.Allocation{ID: "trial-27.0", TaskID: "trial-27"}
	if err := authz.Can(authz.Allocation(earlier), authz.Report, authz.AllocationOf(ownTask)); resolute.ErrorCode(err) != resolute.EForbidden {
		t.Fatalf("an earlier run reports for the current one: %v", err)
	}
}

func TestAnUnknownActionIsRefused(t *testing.T) {
	if err := authz.Can(authz.User(admin), authz.Action("launch missiles"), authz.Cluster); resolute.ErrorCode(err) != resolute.EForbidden {
		t.Fatalf("unknown action: %v", err)
	}
}

func answer(err error) string {
	if err == nil {
		return "ok"
	}
	return resolute.ErrorCode(err)
}

func actorNames() string {
	var names []string
	for _, a := range actors {
		names = append(names, a.name)
	}
	return strings.Join(names, ", ")
}
