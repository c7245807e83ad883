package control_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

// owners is the experiment harness with two users more and the services
// over its runner.
type owners struct {
	*harness
	svc        *control.Services
	alice, bob authz.Actor
}

func newOwners(t *testing.T, slots int) owners {
	t.Helper()
	h := newHarness(t, slots)
	user := func(name string) authz.Actor {
		u, err := h.db.CreateUser(h.ctx, name, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		return authz.User(u)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := control.NewMetricsWriter(h.db, logger)
	ctx, cancel := context.WithCancel(h.ctx)
	t.Cleanup(cancel)
	go metrics.Run(ctx)
	return owners{harness: h, svc: control.NewServices(h.db, h.run, metrics, logger),
		alice: user("alice"), bob: user("bob")}
}

// createAs creates an experiment of config yaml owned by a.
func (o owners) createAs(a authz.Actor, yaml string) resolute.Experiment {
	o.t.Helper()
	e, err := o.svc.Experiments.Create(o.ctx, a, control.CreateRequest{ConfigYAML: yaml})
	if err != nil {
		o.t.Fatal(err)
	}
	return e
}

// allocationOf is the actor of the running allocation of experiment id's
// only trial, and that trial.
func (o owners) allocationOf(id int64) (authz.Actor, resolute.Trial) {
	o.t.Helper()
	trials, err := o.db.Trials(o.ctx, id)
	if err != nil || len(trials) != 1 {
		o.t.Fatalf("trials of experiment %d: %v %v", id, trials, err)
	}
	a, err := o.db.CurrentTrialAllocation(o.ctx, trials[0].ID)
	if err != nil {
		o.t.Fatal(err)
	}
	return authz.Allocation(a), trials[0]
}

// TestAnotherUserCannotChangeSomeonesExperiment: every change of an
// experiment is for its owner or an administrator; a refused change
// changes nothing.
func TestAnotherUserCannotChangeSomeonesExperiment(t *testing.T) {
	o := newOwners(t, 1)
	running := o.createAs(o.alice, single)
	o.admit()
	ended := o.createAs(o.alice, single)
	if err := o.svc.Experiments.SetState(o.ctx, o.alice, ended.ID, "cancel"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.svc.Experiments.AddLabel(o.ctx, o.alice, running.ID, "keep"); err != nil {
		t.Fatal(err)
	}
	own, trial := o.allocationOf(running.ID)
	ws, err := o.svc.Workspaces.Create(o.ctx, o.bob, "bob's")
	if err != nil {
		t.Fatal(err)
	}
	bobs, err := o.svc.Projects.Create(o.ctx, o.bob, ws.ID, "bob's", "")
	if err != nil {
		t.Fatal(err)
	}
	x, name, two := o.svc.Experiments, "mine", 2
	refused := map[string]func(a authz.Actor) error{
		"pause":      func(a authz.Actor) error { return x.SetState(o.ctx, a, running.ID, "pause") },
		"cancel":     func(a authz.Actor) error { return x.SetState(o.ctx, a, running.ID, "cancel") },
		"kill":       func(a authz.Actor) error { return x.SetState(o.ctx, a, running.ID, "kill") },
		"kill trial": func(a authz.Actor) error { return x.KillTrial(o.ctx, a, trial.ID) },
		"archive":    func(a authz.Actor) error { return x.SetArchived(o.ctx, a, ended.ID, true) },
		"delete":     func(a authz.Actor) error { return x.Delete(o.ctx, a, ended.ID) },
		"move":       func(a authz.Actor) error { return x.Move(o.ctx, a, running.ID, bobs.ID) },
		"patch": func(a authz.Actor) error {
			_, err := x.Patch(o.ctx, a, running.ID, resolute.PatchExperimentRequest{Name: &name})
			return err
		},
		"notes":        func(a authz.Actor) error { return x.SetNotes(o.ctx, a, running.ID, "mine") },
		"add label":    func(a authz.Actor) error { _, err := x.AddLabel(o.ctx, a, running.ID, "mine"); return err },
		"remove label": func(a authz.Actor) error { _, err := x.RemoveLabel(o.ctx, a, running.ID, "keep"); return err },
		"scheduling": func(a authz.Actor) error {
			_, err := x.SetScheduling(o.ctx, a, running.ID, control.Scheduling{Priority: &two, MaxSlots: &two})
			return err
		},
	}
	for action, run := range refused {
		if got := code(run(o.bob)); got != resolute.EForbidden {
			t.Errorf("bob may %s alice's experiment: code %q, want forbidden", action, got)
		}
		if got := code(run(own)); got != resolute.EForbidden {
			t.Errorf("the trial's own allocation may %s its experiment: code %q, want forbidden", action, got)
		}
	}
	got := o.experiment(running.ID)
	if got.State != resolute.StateActive || got.Name != running.Name || got.Notes != "" || len(got.Labels) != 1 ||
		got.ProjectID != running.ProjectID || got.Priority != nil || got.MaxSlots != nil {
		t.Fatalf("the refused changes changed the experiment: state %s, name %q, notes %q, labels %v, project %d, priority %v, max slots %v",
			got.State, got.Name, got.Notes, got.Labels, got.ProjectID, got.Priority, got.MaxSlots)
	}
	if tr, _ := o.db.Trial(o.ctx, trial.ID); tr.State != resolute.StateActive {
		t.Fatalf("the refused kill stopped the trial: %s", tr.State)
	}
	if got := o.experiment(ended.ID); got.Archived {
		t.Fatal("the refused archive archived the experiment")
	}
	if _, err := x.Patch(o.ctx, o.alice, running.ID, resolute.PatchExperimentRequest{Name: &name}); err != nil {
		t.Errorf("alice renames her experiment: %v", err)
	}
	if err := x.SetArchived(o.ctx, o.admin, ended.ID, true); err != nil {
		t.Errorf("an administrator archives it: %v", err)
	}
}

// TestExperimentsAreCreatedByUsersInProjectsNotArchived: anyone signed in
// may create and fork, never a task's token, and never into an archived
// project.
func TestExperimentsAreCreatedByUsersInProjectsNotArchived(t *testing.T) {
	o := newOwners(t, 1)
	parent := o.createAs(o.alice, single)
	o.admit()
	own, _ := o.allocationOf(parent.ID)
	fork, err := o.svc.Experiments.Create(o.ctx, o.bob, control.CreateRequest{ParentID: &parent.ID})
	if err != nil {
		t.Fatalf("bob forks alice's experiment: %v", err)
	}
	if fork.UserID != o.bob.UserID() {
		t.Fatalf("the fork belongs to user %d, not to bob", fork.UserID)
	}
	if _, err := o.svc.Experiments.Create(o.ctx, own, control.CreateRequest{ConfigYAML: single}); code(err) != resolute.EForbidden {
		t.Fatalf("an allocation creates an experiment: %v", err)
	}
	ws, _ := o.svc.Workspaces.Create(o.ctx, o.alice, "old")
	p, err := o.svc.Projects.Create(o.ctx, o.alice, ws.ID, "done", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.svc.Projects.SetArchived(o.ctx, o.alice, p.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := o.svc.Experiments.Create(o.ctx, o.alice, control.CreateRequest{ConfigYAML: single, ProjectID: p.ID}); code(err) != resolute.EConflict {
		t.Fatalf("an experiment in an archived project: %v", err)
	}
	named := single + "workspace: old\nproject: done\n"
	if _, err := o.svc.Experiments.Create(o.ctx, o.alice, control.CreateRequest{ConfigYAML: named}); code(err) != resolute.EConflict {
		t.Fatalf("an experiment in an archived project named by its config: %v", err)
	}
}

// TestAPatchKeepsTheRulesOfEachEdit: PATCH, the API's one edit of many
// fields, refuses what each field's own edit refuses, and changes a queued
// experiment's scheduling as the queue does.
func TestAPatchKeepsTheRulesOfEachEdit(t *testing.T) {
	o := newOwners(t, 0)
	e := o.createAs(o.alice, single)
	many := make([]string, control.MaxLabels+1)
	for i := range many {
		many[i] = fmt.Sprintf("l%d", i)
	}
	zero, nul, tab := 0, "a\x00b", []string{"a\tb"}
	refused := map[string]resolute.PatchExperimentRequest{
		"too many labels":     {Labels: &many},
		"a label with a tab":  {Labels: &tab},
		"notes with a NUL":    {Notes: &nul},
		"a max_slots of zero": {Resources: &resolute.PatchResources{MaxSlots: &zero}},
	}
	for what, req := range refused {
		if _, err := o.svc.Experiments.Patch(o.ctx, o.alice, e.ID, req); resolute.ErrorCode(err) != resolute.EInvalid {
			t.Errorf("%s: %v, want invalid", what, err)
		}
	}
	p, name := 7, "renamed"
	got, err := o.svc.Experiments.Patch(o.ctx, o.alice, e.ID, resolute.PatchExperimentRequest{Name: &name, Resources: &resolute.PatchResources{Priority: &p}})
	if err != nil || got.Name != name || got.Priority == nil || *got.Priority != 7 {
		t.Fatalf("patch: %+v, %v", got, err)
	}
	jobs, _ := o.run.Queue.Jobs(o.ctx, "")
	if len(jobs) != 1 || jobs[0].Priority != 7 {
		t.Errorf("the queue after the patch: %+v", jobs)
	}
}
