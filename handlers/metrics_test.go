package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestARetriedMetricsPostIsStoredOnce: the harness retries a POST that
// timed out, though the master may have stored it; the retry is answered
// as the first was and stores nothing, so the series has one point.
func TestARetriedMetricsPostIsStoredOnce(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	trialID, taskToken := runningTrial(t, m, token)
	trial, err := m.DB.Trial(t.Context(), trialID)
	if err != nil {
		t.Fatal(err)
	}
	post := func(group string, steps int64, loss float64) {
		t.Helper()
		body := fmt.Sprintf(`{"group": %q, "metrics": {"trial_id": %d, "trial_run_id": %d, "steps_completed": %d,
			"metrics": {"avg_metrics": {"loss": %v}}}}`, group, trialID, trial.RunID, steps, loss)
		req, _ := http.NewRequest("POST", m.URL+"/api/v1/trials/"+itoa(trialID)+"/metrics", strings.NewReader(body))
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s metrics at %d: status %d", group, steps, resp.StatusCode)
		}
	}
	for range 2 {
		post("validation", 10, 0.5)
		post("training", 10, 0.7)
	}
	post("validation", 20, 0.4)
	for _, group := range []string{"validation", "training"} {
		var got resolute.MetricsResponse
		api(t, m, "GET", "/api/v1/trials/"+itoa(trialID)+"/metrics?group="+group, token, "", &got)
		if n := len(got.Metrics); n == 0 || got.Metrics[0].StepsCompleted != 10 || (n > 1 && got.Metrics[1].StepsCompleted == 10) {
			t.Errorf("%s reports: %+v, want one at 10 batches", group, got.Metrics)
		}
	}
	tr := trial
	var series resolute.ExperimentMetricsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(tr.ExperimentID)+"/metrics?group=validation&metric=loss", token, "", &series)
	if len(series.Trials) != 1 {
		t.Fatalf("validation series %+v, want one trial", series.Trials)
	}
	want := "[10:0.5 20:0.4]"
	var got []string
	for _, p := range series.Trials[0].Points {
		got = append(got, fmt.Sprintf("%d:%g", p.StepsCompleted, p.Value))
	}
	if fmt.Sprint(got) != want {
		t.Errorf("validation series %+v, want one trial with %v", series.Trials, want)
	}
}
