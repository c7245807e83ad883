package handlers_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAChartsPointsAreTheTrialsReportedValues reads an experiment's chart
// data as the chart asks for it (downsampled from the kept points, for few
// trials and for many) and checks each point against the trial's reports
// through the API, at full precision (what the chart's tooltip shows), and
// that each trial's smallest, largest and last value are among them.
func TestAChartsPointsAreTheTrialsReportedValues(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	rng := rand.New(rand.NewPCG(1, 2))
	losses := make([][]float64, 3)
	for i := range losses {
		for j := range 2500 {
			losses[i] = append(losses[i], 1/float64(j+1)+rng.Float64()*1e-9+float64(i)*math.Pi/1e6)
		}
		losses[i][rng.IntN(2500)] = 50 + rng.Float64()
		losses[i][rng.IntN(2500)] = -rng.Float64()
	}
	e, trials := experimentWithMetrics(t, m, losses...)
	for _, maxPoints := range []string{"16", "240", "600"} {
		var got resolute.ExperimentMetricsResponse
		if code := api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/metrics?group=validation&metric=loss&max_points="+maxPoints, token, "", &got); code != 200 {
			t.Fatalf("status %d", code)
		}
		if len(got.Trials) != len(trials) {
			t.Fatalf("%d trials, want %d", len(got.Trials), len(trials))
		}
		for i, tr := range got.Trials {
			var reported resolute.MetricsResponse
			api(t, m, "GET", "/api/v1/trials/"+itoa(tr.TrialID)+"/metrics?group=validation", token, "", &reported)
			byStep := map[int64]float64{}
			for _, r := range reported.Metrics {
				if v, ok := lossOf(r); ok {
					byStep[r.StepsCompleted] = v
				}
			}
			var steps []int64
			for _, p := range tr.Points {
				steps = append(steps, p.StepsCompleted)
				if v, ok := byStep[p.StepsCompleted]; !ok || v != p.Value {
					t.Errorf("max_points=%s, trial %d at %d batches: the chart has %v, the API %v", maxPoints, tr.TrialID, p.StepsCompleted, p.Value, v)
				}
			}
			lo, hi := slices.Index(losses[i], slices.Min(losses[i])), slices.Index(losses[i], slices.Max(losses[i]))
			for _, want := range []int64{10, int64(10 * (lo + 1)), int64(10 * (hi + 1)), 25_000} {
				if !slices.Contains(steps, want) {
					t.Errorf("max_points=%s, trial %d: the point at %d batches (first, smallest, largest or last) is lost: %v", maxPoints, tr.TrialID, want, steps)
				}
			}
		}
	}
}

// lossOf is a report's loss, if a number.
func lossOf(r resolute.MetricsReport) (float64, bool) {
	var body struct {
		AvgMetrics map[string]any `json:"avg_metrics"`
	}
	if err := json.Unmarshal(r.Metrics, &body); err != nil {
		return 0, false
	}
	v, ok := body.AvgMetrics["loss"].(float64)
	return v, ok
}
