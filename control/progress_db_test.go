package control_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/resolute-ml/resolute"
)

// TestAnExperimentsProgressCountsItsRunningTrials: a running trial's
// progress report, or, when it reports none, its batches over its target
// length, moves its experiment's stored progress (which the list, the
// header, the API and det all read) while the trial still runs.
func TestAnExperimentsProgressCountsItsRunningTrials(t *testing.T) {
	o := newOwners(t, 2)
	reporting := o.createAs(o.alice, single)
	silent := o.createAs(o.alice, `
name: two
entrypoint: python3 train.py
hyperparameters: {lr: 0.1}
searcher: {name: single, metric: loss, max_length: {batches: 600}}
`)
	o.admit()
	progressOf := func(id int64) float64 {
		e, err := o.db.Experiment(o.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Progress
	}

	own, trial := o.allocationOf(reporting.ID)
	if err := o.svc.Trials.ReportProgress(o.ctx, own, trial.ID, 0.4); err != nil {
		t.Fatal(err)
	}
	if got := progressOf(reporting.ID); got != 0.4 {
		t.Errorf("a single trial reported 40%%: its experiment is at %v", got)
	}

	own, trial = o.allocationOf(silent.ID)
	training := resolute.MetricsReport{TrialID: trial.ID, StepsCompleted: 575, Group: "training",
		Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5}}`)}
	if err := o.svc.Trials.ReportMetrics(o.ctx, own, training, map[string]any{"loss": 0.5}); err != nil {
		t.Fatal(err)
	}
	if got := progressOf(silent.ID); math.Abs(got-575.0/600) > 1e-9 {
		t.Errorf("a trial at 575 of 600 batches that reports no progress: its experiment is at %v, want %v", got, 575.0/600)
	}
}
