package control_test

import (
	"strconv"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

// TestAWarmStartBeginsTrialsFromTheNamedCheckpoint: searcher.source_trial_id
// starts the new experiment's trials from that trial's latest checkpoint and
// searcher.source_checkpoint_uuid from that checkpoint (DET_LATEST_CHECKPOINT);
// a trial without one, or an unknown checkpoint, is refused.
func TestAWarmStartBeginsTrialsFromTheNamedCheckpoint(t *testing.T) {
	const warm = "name: warm\nentrypoint: python3 train.py\nhyperparameters: {lr: 0.1}\n"
	h := newHarness(t, 4)
	parent := h.create(single)
	h.admit()
	run := h.rm.running()
	if len(run) != 1 {
		t.Fatalf("launched %+v", run)
	}
	trial := h.trialOf(run[0])
	tid := strconv.FormatInt(trial, 10)
	if _, err := h.x.Create(h.ctx, h.admin, control.CreateRequest{ConfigYAML: warm + "searcher: {name: single, metric: loss, source_trial_id: " + tid + "}\n"}); err == nil ||
		resolute.ErrorMessage(err) != "searcher.source_trial_id: trial "+tid+" has no checkpoint" {
		t.Fatalf("a trial without a checkpoint: %v", err)
	}
	const uuid = "00000000-0000-0000-0000-0000000000c1"
	if err := h.db.CreateCheckpoint(h.ctx, resolute.Checkpoint{UUID: uuid, TrialID: trial, ExperimentID: parent.ID,
		AllocationID: run[0].AllocationID, TaskID: run[0].TaskID, StepsCompleted: 10}); err != nil {
		t.Fatal(err)
	}
	h.exit(run[0].AllocationID, 0)
	for _, source := range []string{"source_trial_id: " + tid, "source_checkpoint_uuid: " + uuid} {
		e := h.create(warm + "searcher: {name: single, metric: loss, " + source + "}\n")
		h.admit()
		started := false
		for _, r := range h.rm.running() {
			if h.trialExperiment(r) == e.ID {
				started = true
				if r.Env["DET_LATEST_CHECKPOINT"] != uuid {
					t.Errorf("%s: the trial starts from %q, want %s", source, r.Env["DET_LATEST_CHECKPOINT"], uuid)
				}
			}
		}
		if !started {
			t.Fatalf("%s: no trial started", source)
		}
	}
	if _, err := h.x.Create(h.ctx, h.admin, control.CreateRequest{ConfigYAML: warm +
		"searcher: {name: single, metric: loss, source_checkpoint_uuid: 00000000-0000-0000-0000-0000000000ff}\n"}); err == nil {
		t.Fatal("an unknown checkpoint was taken")
	}
}
