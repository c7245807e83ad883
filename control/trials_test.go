package control_test

import (
	"encoding/json"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

// metricsWriter is a running MetricsWriter over the harness's database.
// TestATrialsAllocationReportsOnlyForItsOwnTrial: what a task reports of
// itself comes only from its own allocation, not from another trial's nor
// from a user.
func TestATrialsAllocationReportsOnlyForItsOwnTrial(t *testing.T) {
	o := newOwners(t, 2)
	mine, other := o.createAs(o.alice, single), o.createAs(o.alice, single)
	o.admit()
	own, trial := o.allocationOf(mine.ID)
	_, theirs := o.allocationOf(other.ID)
	validation := func(id int64) resolute.MetricsReport {
		return resolute.MetricsReport{TrialID: id, StepsCompleted: 10, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5}}`)}
	}
	trials := o.svc.Trials
	reports := map[string]func(a authz.Actor, id int64) error{
		"progress":     func(a authz.Actor, id int64) error { return trials.ReportProgress(o.ctx, a, id, 0.5) },
		"runner state": func(a authz.Actor, id int64) error { return trials.SetRunnerState(o.ctx, a, id, "validating") },
		"early exit":   func(a authz.Actor, id int64) error { return trials.EarlyExit(o.ctx, a, id, control.EarlyExitInvalidHP) },
		"metrics": func(a authz.Actor, id int64) error {
			return trials.ReportMetrics(o.ctx, a, validation(id), map[string]any{"loss": 0.5})
		},
		"a checkpoint": func(a authz.Actor, id int64) error {
			return o.svc.Checkpoints.Report(o.ctx, a, resolute.Checkpoint{UUID: "00000000-0000-0000-0000-00000000000" + string(rune('0'+id%10)),
				TrialID: id, StepsCompleted: 10, Resources: map[string]int64{"w": 1}})
		},
	}
	for what, report := range reports {
		if got := code(report(own, theirs.ID)); got != resolute.EForbidden {
			t.Errorf("an allocation reports %s for another trial: code %q, want forbidden", what, got)
		}
		if got := code(report(o.alice, trial.ID)); got != resolute.EForbidden {
			t.Errorf("the experiment's owner reports %s as if she were its trial: code %q, want forbidden", what, got)
		}
	}
	got, _ := o.db.Trial(o.ctx, theirs.ID)
	if got.Progress != 0 || got.RunnerState != "" || got.EarlyExit != "" || got.BestValidation != nil || got.LatestCheckpoint != "" {
		t.Fatalf("the refused reports changed the other trial: %+v", got)
	}
	if m, _ := o.db.TrialMetrics(o.ctx, theirs.ID, "validation"); len(m) != 0 {
		t.Fatalf("the refused metrics were stored: %+v", m)
	}
	for what, report := range reports {
		if err := report(own, trial.ID); err != nil {
			t.Errorf("the trial's own allocation reports %s: %v", what, err)
		}
	}
	got, _ = o.db.Trial(o.ctx, trial.ID)
	if got.Progress != 0.5 || got.RunnerState != "validating" || got.EarlyExit != control.EarlyExitInvalidHP ||
		got.BestValidation == nil || got.LatestCheckpoint == "" || got.RunID != 1 {
		t.Fatalf("the trial's own reports: %+v", got)
	}
	if m, _ := o.db.TrialMetrics(o.ctx, trial.ID, "validation"); len(m) != 1 || m[0].TrialRunID != 1 {
		t.Fatalf("the stored metrics (run 0 is the current run): %+v", m)
	}
}

// TestOnlyItsOwnerAnAdministratorOrItsTrialMayDeleteACheckpoint closes the
// hole where any signed-in user marked anyone's checkpoint deleted.
func TestOnlyItsOwnerAnAdministratorOrItsTrialMayDeleteACheckpoint(t *testing.T) {
	o := newOwners(t, 2)
	alices, bobs := o.createAs(o.alice, single), o.createAs(o.bob, single)
	o.admit()
	aliceTrial, at := o.allocationOf(alices.ID)
	bobTrial, bt := o.allocationOf(bobs.ID)
	const ca, cb = "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000"
	for _, c := range []struct {
		a    authz.Actor
		uuid string
		t    int64
	}{{aliceTrial, ca, at.ID}, {bobTrial, cb, bt.ID}} {
		err := o.svc.Checkpoints.Report(o.ctx, c.a, resolute.Checkpoint{UUID: c.uuid, TrialID: c.t, StepsCompleted: 10, Resources: map[string]int64{"w": 8}, Size: 8})
		if err != nil {
			t.Fatal(err)
		}
	}
	state := func(uuid string) resolute.Checkpoint {
		t.Helper()
		c, err := o.db.Checkpoint(o.ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	deleted := func(uuids ...string) []control.CheckpointFiles {
		out := make([]control.CheckpointFiles, len(uuids))
		for i, u := range uuids {
			out[i] = control.CheckpointFiles{UUID: u}
		}
		return out
	}
	// Bob's own checkpoint and alice's in one request: neither changes.
	if err := o.svc.Checkpoints.SetFiles(o.ctx, o.bob, deleted(cb, ca)); code(err) != resolute.EForbidden {
		t.Fatalf("bob marks alice's checkpoint deleted: %v", err)
	}
	if err := o.svc.Checkpoints.SetFiles(o.ctx, bobTrial, deleted(ca)); code(err) != resolute.EForbidden {
		t.Fatalf("another trial marks alice's checkpoint deleted: %v", err)
	}
	err := o.svc.Checkpoints.Report(o.ctx, bobTrial, resolute.Checkpoint{UUID: ca, TrialID: bt.ID, StepsCompleted: 20, Resources: map[string]int64{}})
	if code(err) != resolute.EForbidden {
		t.Fatalf("another trial reports alice's checkpoint as its own: %v", err)
	}
	for _, u := range []string{ca, cb} {
		if c := state(u); c.State != "COMPLETED" || c.Size != 8 || c.StepsCompleted != 10 {
			t.Fatalf("checkpoint %s after the refusals: %+v", u, c)
		}
	}
	if got, _ := o.db.Trial(o.ctx, bt.ID); got.LatestCheckpoint != cb {
		t.Fatalf("the refused report made %q bob's trial's latest", got.LatestCheckpoint)
	}
	if err := o.svc.Checkpoints.SetFiles(o.ctx, aliceTrial, []control.CheckpointFiles{{UUID: ca, Resources: map[string]int64{"w": 3}}}); err != nil {
		t.Fatalf("the trial's own allocation deletes some files: %v", err)
	}
	if c := state(ca); c.State != "COMPLETED" || c.Size != 3 {
		t.Fatalf("after deleting some files: %+v", c)
	}
	if err := o.svc.Checkpoints.SetFiles(o.ctx, o.alice, deleted(ca)); err != nil {
		t.Fatalf("alice deletes her checkpoint: %v", err)
	}
	if err := o.svc.Checkpoints.SetFiles(o.ctx, o.admin, deleted(cb)); err != nil {
		t.Fatalf("an administrator deletes bob's checkpoint: %v", err)
	}
	if state(ca).State != "DELETED" || state(cb).State != "DELETED" {
		t.Fatalf("deleted: %s %s", state(ca).State, state(cb).State)
	}
}

// TestAReportNamesTheTrialsCurrentRun: metrics of another run than the
// trial's current one are refused (an earlier run's would escape the
// restart's hiding), and a checkpoint registered as a model version or
// already deleted is not reported again over its files.
func TestAReportNamesTheTrialsCurrentRunAndLeavesRegisteredCheckpointsAlone(t *testing.T) {
	o := newOwners(t, 1)
	e := o.createAs(o.alice, single)
	o.admit()
	own, trial := o.allocationOf(e.ID)
	report := func(run int) error {
		return o.svc.Trials.ReportMetrics(o.ctx, own, resolute.MetricsReport{TrialID: trial.ID, TrialRunID: run, StepsCompleted: 10,
			Group: "training", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5}}`)}, map[string]any{"loss": 0.5})
	}
	if err := report(trial.RunID + 1); resolute.ErrorCode(err) != resolute.EInvalid {
		t.Errorf("a report of run %d while the trial is on %d: %v", trial.RunID+1, trial.RunID, err)
	}
	if err := report(trial.RunID); err != nil {
		t.Errorf("a report of the current run: %v", err)
	}
	if err := report(0); err != nil {
		t.Errorf("a report naming no run: %v", err)
	}

	uuid := "00000000-0000-4000-8000-0000000000a1"
	ckpt := resolute.Checkpoint{UUID: uuid, TrialID: trial.ID, StepsCompleted: 10, Resources: map[string]int64{"w": 1}}
	if err := o.svc.Checkpoints.Report(o.ctx, own, ckpt); err != nil {
		t.Fatal(err)
	}
	name := "m"
	if _, err := o.svc.Models.Create(o.ctx, o.alice, resolute.ModelRequest{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.svc.Models.RegisterVersion(o.ctx, o.alice, name, resolute.ModelVersionRequest{CheckpointUUID: uuid}); err != nil {
		t.Fatal(err)
	}
	ckpt.Resources = map[string]int64{"other": 7}
	if err := o.svc.Checkpoints.Report(o.ctx, own, ckpt); resolute.ErrorCode(err) != resolute.EConflict {
		t.Errorf("reporting a registered checkpoint again: %v", err)
	}
	if c, _ := o.db.Checkpoint(o.ctx, uuid); c.Resources["w"] != 1 {
		t.Errorf("the registered checkpoint's files changed: %v", c.Resources)
	}
}
