package control_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/resolute-ml/resolute"
)

// TestARestartHidesTheReportsPastItsCheckpoint: a trial reports steps 10 to
// 80 on run 1, fails, restarts from its checkpoint at 50 and reports 60 to
// 100 on run 2. Each step is shown once, 60 to 80 from run 2; run 1's
// reports past 50 are kept but count for no best validation.
func TestARestartHidesTheReportsPastItsCheckpoint(t *testing.T) {
	h := newHarness(t, 1)
	e := h.create(single)
	h.admit()
	first := h.rm.running()[0]
	trial := h.trialOf(first)
	report := func(run int, steps int64, loss float64) {
		t.Helper()
		m := json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %v}}`, loss))
		err := h.db.InsertMetrics(h.ctx, []resolute.MetricsReport{
			{TrialID: trial, TrialRunID: run, StepsCompleted: steps, Group: "training", Metrics: m},
			{TrialID: trial, TrialRunID: run, StepsCompleted: steps, Group: "validation", Metrics: m}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.x.ValidationReported(h.ctx, trial, run, steps, map[string]any{"loss": loss}); err != nil {
			t.Fatal(err)
		}
	}
	for s := int64(10); s <= 80; s += 10 {
		report(1, s, float64(100-s)/100) // 0.9 down to 0.2
		if s == 50 {
			err := h.db.CreateCheckpoint(h.ctx, resolute.Checkpoint{UUID: "00000000-0000-0000-0000-000000000050", TrialID: trial,
				ExperimentID: e.ID, AllocationID: first.AllocationID, TaskID: first.TaskID, StepsCompleted: 50})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	h.exit(first.AllocationID, 1)
	h.admit()
	second := h.rm.running()
	if len(second) != 1 || second[0].Env["DET_TRIAL_RUN_ID"] != "2" {
		t.Fatalf("restart: %+v", second)
	}
	for s := int64(60); s <= 100; s += 10 {
		report(2, s, float64(400-s)/1000) // 0.34 down to 0.3
	}

	for _, group := range []string{"training", "validation"} {
		list, err := h.db.TrialMetrics(h.ctx, trial, group)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range list {
			got = append(got, strconv.FormatInt(r.StepsCompleted, 10)+"@"+strconv.Itoa(r.TrialRunID))
		}
		if want := "[10@1 20@1 30@1 40@1 50@1 60@2 70@2 80@2 90@2 100@2]"; fmt.Sprint(got) != want {
			t.Errorf("%s reports %v, want %s", group, got, want)
		}
	}
	series, err := h.db.ExperimentMetricSeries(h.ctx, e.ID, "validation", "loss")
	if err != nil || len(series) != 1 || len(series[0].Points) != 10 || series[0].Points[6].Value != 0.33 {
		t.Errorf("series %+v, %v; want 10 points, 0.33 at 70", series, err)
	}
	tr, err := h.db.Trial(h.ctx, trial)
	if err != nil {
		t.Fatal(err)
	}
	best := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return fmt.Sprint(*v)
	}
	if trialBest, expBest := best(tr.BestValidation), best(h.experiment(e.ID).BestValidation); trialBest != "0.3" || expBest != "0.3" {
		t.Errorf("best validation: trial %s, experiment %s; want 0.3, not run 1's hidden 0.2", trialBest, expBest)
	}
	conn, err := h.db.Connect(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(h.ctx)
	var hidden int
	err = conn.QueryRow(h.ctx, "SELECT count(*) FROM metrics WHERE trial_id = $1 AND hidden AND trial_run_id = 1 AND steps_completed > 50", trial).Scan(&hidden)
	if err != nil || hidden != 6 {
		t.Errorf("%d hidden reports of run 1 (%v), want 6 kept", hidden, err)
	}
}
