package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// report stores a trial's training reports of loss, one a step from 0.
func report(t *testing.T, d *db.DB, trialID int64, losses ...float64) {
	t.Helper()
	reports := make([]resolute.MetricsReport, len(losses))
	for i, v := range losses {
		reports[i] = resolute.MetricsReport{TrialID: trialID, TrialRunID: 1, StepsCompleted: int64(i), Group: "training",
			Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %v}}`, v))}
	}
	if err := d.InsertMetrics(context.Background(), reports); err != nil {
		t.Fatal(err)
	}
}

// trialSteps is the steps of the reports EachTrialMetric picks.
func trialSteps(t *testing.T, d *db.DB, trialID int64, s db.Series) []int64 {
	t.Helper()
	var out []int64
	err := d.EachTrialMetric(context.Background(), trialID, s, func(r resolute.MetricsReport) error {
		out = append(out, r.StepsCompleted)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func TestSeriesAreDownsampledInSQLKeepingEndsAndSpikes(t *testing.T) {
	d := bootstrapped(t)
	tr := newTrial(t, d)
	values := ones(1000)
	values[537] = 50  // a spike
	values[212] = -50 // a dip
	report(t, d, tr.ID, values...)
	all := db.Series{Group: "training", Metric: "loss", MaxPoints: 20, MaxSteps: -1, AfterStep: -1}
	got := trialSteps(t, d, tr.ID, all)
	if len(got) > 22 {
		t.Fatalf("%d points for 20", len(got))
	}
	if got[0] != 0 || got[len(got)-1] != 999 {
		t.Fatalf("ends lost: %v", got)
	}
	if !slices.Contains(got, 537) || !slices.Contains(got, 212) {
		t.Fatalf("the spike at 537 or the dip at 212 is lost: %v", got)
	}
	if !slices.IsSorted(got) {
		t.Fatalf("not in step order: %v", got)
	}
	// Without the metric, each bucket keeps its first report.
	noMetric := all
	noMetric.Metric = "accuracy"
	if got := trialSteps(t, d, tr.ID, noMetric); len(got) != 11 || got[0] != 0 || got[1] != 100 || got[10] != 999 {
		t.Errorf("without the metric: %v", got)
	}
	// A short series, or no max_points, is kept whole.
	if got := trialSteps(t, d, tr.ID, db.Series{Group: "training", MaxSteps: -1, AfterStep: -1}); len(got) != 1000 {
		t.Errorf("%d reports without max_points", len(got))
	}
	within := all
	within.MinSteps, within.MaxSteps = 530, 540
	if diff := cmp.Diff([]int64{530, 531, 532, 533, 534, 535, 536, 537, 538, 539, 540}, trialSteps(t, d, tr.ID, within)); diff != "" {
		t.Errorf("batches 530..540 (-want +got):\n%s", diff)
	}
	after := all
	after.AfterStep = 995
	if diff := cmp.Diff([]int64{996, 997, 998, 999}, trialSteps(t, d, tr.ID, after)); diff != "" {
		t.Errorf("after step 995 (-want +got):\n%s", diff)
	}
}

func TestExperimentSeriesAreDownsampledPerTrial(t *testing.T) {
	d := bootstrapped(t)
	tr := newTrial(t, d)
	other, err := d.CreateTrial(context.Background(), tr.ExperimentID, 2, "ACTIVE", []byte(`{}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	values := ones(1000)
	values[537] = -50
	report(t, d, tr.ID, values...)
	report(t, d, other.ID, 3, 2, 1)
	got, err := d.ExperimentSeries(context.Background(), tr.ExperimentID, db.Series{Group: "training", Metric: "loss", MaxPoints: 20, MaxSteps: -1, AfterStep: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].TrialID != tr.ID || got[1].TrialID != other.ID {
		t.Fatalf("series: %v", got)
	}
	points := got[0].Points
	if len(points) > 22 || points[0].StepsCompleted != 0 || points[len(points)-1].StepsCompleted != 999 {
		t.Fatalf("%d points, ends %v", len(points), points)
	}
	if !slices.ContainsFunc(points, func(p resolute.MetricPoint) bool { return p.StepsCompleted == 537 && p.Value == -50 }) {
		t.Fatalf("the dip at 537 is lost: %v", points)
	}
	if diff := cmp.Diff([]resolute.MetricPoint{{StepsCompleted: 0, Value: 3}, {StepsCompleted: 1, Value: 2}, {StepsCompleted: 2, Value: 1}}, got[1].Points,
		cmpopts.IgnoreFields(resolute.MetricPoint{}, "ReportedAt")); diff != "" {
		t.Errorf("a short series (-want +got):\n%s", diff)
	}
	if slices.ContainsFunc(got[1].Points, func(p resolute.MetricPoint) bool { return p.ReportedAt.IsZero() }) {
		t.Errorf("a point without its report time: %v", got[1].Points)
	}
}

func TestExperimentSeriesCarryTheEpochsTheReportsName(t *testing.T) {
	d := bootstrapped(t)
	tr := newTrial(t, d)
	err := d.InsertMetrics(context.Background(), []resolute.MetricsReport{
		{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: 10, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5, "epochs": 1.5}}`)},
		{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: 20, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.4, "epoch": 3}}`)},
		{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: 30, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.3, "epochs": "three"}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ExperimentSeries(context.Background(), tr.ExperimentID, db.Series{Group: "validation", Metric: "loss", MaxSteps: -1, AfterStep: -1})
	if err != nil {
		t.Fatal(err)
	}
	var epochs []any
	for _, p := range got[0].Points {
		if p.Epoch == nil {
			epochs = append(epochs, nil)
		} else {
			epochs = append(epochs, *p.Epoch)
		}
	}
	if diff := cmp.Diff([]any{1.5, 3.0, nil}, epochs); diff != "" {
		t.Errorf("epochs (-want +got):\n%s", diff)
	}
}
