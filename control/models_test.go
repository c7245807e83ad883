package control_test

import (
	"encoding/json"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// checkpointOf stores a completed checkpoint of experiment e's first trial.
func (o owners) checkpointOf(e resolute.Experiment, uuid string) string {
	o.t.Helper()
	trials, err := o.db.Trials(o.ctx, e.ID)
	if err != nil || len(trials) == 0 {
		o.t.Fatalf("trials of %d: %v", e.ID, err)
	}
	t := trials[0]
	if err := o.db.CreateCheckpoint(o.ctx, resolute.Checkpoint{UUID: uuid, TrialID: t.ID, ExperimentID: e.ID,
		AllocationID: t.TaskID() + ".1", TaskID: t.TaskID(), StepsCompleted: 10, Resources: map[string]int64{"w": 1}, Size: 1}); err != nil {
		o.t.Fatal(err)
	}
	return uuid
}

// TestOnlyAModelsOwnerOrAnAdministratorChangesIt: another user may read
// and register checkpoints in models of their own, but changes nothing of
// someone else's model, its versions or its aliases.
func TestOnlyAModelsOwnerOrAnAdministratorChangesIt(t *testing.T) {
	o := newOwners(t, 0)
	models := o.svc.Models
	e := o.createAs(o.alice, single)
	first := o.checkpointOf(e, "00000000-0000-4000-8000-000000000001")
	second := o.checkpointOf(e, "00000000-0000-4000-8000-000000000002")
	name := "digits"
	if _, err := models.Create(o.ctx, o.alice, resolute.ModelRequest{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := models.RegisterVersion(o.ctx, o.alice, name, resolute.ModelVersionRequest{CheckpointUUID: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := models.SetAlias(o.ctx, o.alice, name, "production", 1); err != nil {
		t.Fatal(err)
	}
	desc, other, meta := "bob's now", "bobs", json.RawMessage(`{"owner":"bob"}`)
	refused := map[string]func(a authz.Actor) error{
		"edit": func(a authz.Actor) error {
			_, err := models.Edit(o.ctx, a, name, resolute.ModelRequest{Description: &desc})
			return err
		},
		"rename": func(a authz.Actor) error {
			_, err := models.Edit(o.ctx, a, name, resolute.ModelRequest{Name: &other})
			return err
		},
		"archive": func(a authz.Actor) error { _, err := models.SetArchived(o.ctx, a, name, true); return err },
		"move":    func(a authz.Actor) error { return models.Move(o.ctx, a, name, 1) },
		"register": func(a authz.Actor) error {
			_, err := models.RegisterVersion(o.ctx, a, name, resolute.ModelVersionRequest{CheckpointUUID: second})
			return err
		},
		"register from the form": func(a authz.Actor) error {
			_, err := models.RegisterCheckpoint(o.ctx, a, second, name, true)
			return err
		},
		"edit a version": func(a authz.Actor) error {
			_, err := models.EditVersion(o.ctx, a, name, 1, resolute.ModelVersionRequest{Metadata: &meta})
			return err
		},
		"set an alias":     func(a authz.Actor) error { _, err := models.SetAlias(o.ctx, a, name, "staging", 1); return err },
		"remove an alias":  func(a authz.Actor) error { return models.RemoveAlias(o.ctx, a, name, "production") },
		"delete a version": func(a authz.Actor) error { _, err := models.DeleteVersion(o.ctx, a, name, 1); return err },
		"delete":           func(a authz.Actor) error { _, err := models.Delete(o.ctx, a, name); return err },
	}
	for what, change := range refused {
		if err := change(o.bob); resolute.ErrorCode(err) != resolute.EForbidden {
			t.Errorf("bob may %s alice's model: %v", what, err)
		}
	}
	m, err := o.db.Model(o.ctx, name)
	if err != nil || m.Description != "" || m.Archived || m.NumVersions != 1 {
		t.Fatalf("bob's refused changes changed the model: %+v, %v", m, err)
	}
	if v, err := o.db.ModelVersionByAlias(o.ctx, m, "production"); err != nil || v.Version != 1 || string(v.Metadata) == string(meta) {
		t.Fatalf("bob's refused changes changed version 1: %+v, %v", v, err)
	}

	// Bob registers the same checkpoint in a model of his own, made by the
	// register form.
	if v, err := models.RegisterCheckpoint(o.ctx, o.bob, first, "bob's digits", true); err != nil || v.Version != 1 {
		t.Fatalf("bob registers into his own new model: %+v, %v", v, err)
	}
	// Alice and the administrator may do all of it.
	admin := authz.System
	for _, what := range []string{"edit", "register", "edit a version", "set an alias", "remove an alias", "archive"} {
		if err := refused[what](o.alice); err != nil {
			t.Errorf("alice may not %s her model: %v", what, err)
		}
	}
	for _, what := range []string{"delete a version", "delete"} {
		if err := refused[what](admin); err != nil {
			t.Errorf("an administrator may not %s: %v", what, err)
		}
	}
}

func TestModelRulesHoldInTheService(t *testing.T) {
	o := newOwners(t, 0)
	models := o.svc.Models
	e := o.createAs(o.alice, single)
	uuid := o.checkpointOf(e, "00000000-0000-4000-8000-000000000003")
	name, bad := "m", "a/b"
	if _, err := models.Create(o.ctx, o.alice, resolute.ModelRequest{Name: &name}); err != nil {
		t.Fatal(err)
	}
	notObject := json.RawMessage(`[1]`)
	tests := map[string]struct {
		run  func() error
		code string
	}{
		"a duplicate name":  {func() error { _, err := models.Create(o.ctx, o.bob, resolute.ModelRequest{Name: &name}); return err }, resolute.EConflict},
		"a slash in a name": {func() error { _, err := models.Create(o.ctx, o.bob, resolute.ModelRequest{Name: &bad}); return err }, resolute.EInvalid},
		"metadata that is no object": {func() error {
			_, err := models.Create(o.ctx, o.bob, resolute.ModelRequest{Name: new("x"), Metadata: &notObject})
			return err
		}, resolute.EInvalid},
		"an unknown checkpoint": {func() error {
			_, err := models.RegisterVersion(o.ctx, o.alice, name, resolute.ModelVersionRequest{CheckpointUUID: "00000000-0000-4000-8000-0000000000ff"})
			return err
		}, resolute.ENotFound},
		"a reserved alias":       {func() error { _, err := models.SetAlias(o.ctx, o.alice, name, "latest", 1); return err }, resolute.EInvalid},
		"an alias of no version": {func() error { _, err := models.SetAlias(o.ctx, o.alice, name, "prod", 7); return err }, resolute.ENotFound},
		"a form's unknown model": {func() error { _, err := models.RegisterCheckpoint(o.ctx, o.alice, uuid, "nope", false); return err }, resolute.ENotFound},
	}
	for what, tc := range tests {
		if got := resolute.ErrorCode(tc.run()); got != tc.code {
			t.Errorf("%s: %q, want %q", what, got, tc.code)
		}
	}
}

// TestACheckpointBeingCollectedIsNotRegistered: once the checkpoint policy
// handed a checkpoint to a GC task, it cannot become a model version whose
// files that task then deletes.
func TestACheckpointBeingCollectedIsNotRegistered(t *testing.T) {
	o := newOwners(t, 0)
	e := o.createAs(o.alice, single)
	uuid := o.checkpointOf(e, "00000000-0000-4000-8000-0000000000c1")
	gc, err := o.db.CreateTask(o.ctx, db.NewTask{Type: resolute.TaskCheckpointGC, Config: []byte("{}"), UserID: e.UserID,
		ProjectID: e.ProjectID, ResourcePool: "default", ExperimentIDs: []int64{e.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.db.InTx(o.ctx, func(q *db.Queries) error { return q.AddCheckpointGC(o.ctx, gc, []string{uuid}) }); err != nil {
		t.Fatal(err)
	}
	name := "m"
	if _, err := o.svc.Models.Create(o.ctx, o.alice, resolute.ModelRequest{Name: &name}); err != nil {
		t.Fatal(err)
	}
	_, err = o.svc.Models.RegisterVersion(o.ctx, o.alice, name, resolute.ModelVersionRequest{CheckpointUUID: uuid})
	if resolute.ErrorCode(err) != resolute.EConflict {
		t.Fatalf("registering a checkpoint being collected: %v", err)
	}
}
