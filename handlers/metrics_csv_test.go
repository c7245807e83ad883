package handlers_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheMetricsCSVHoldsEveryReportAsTheAPIGivesIt: the experiment's and the
// trial's CSV have a row per report (trial, group, steps, time) and a
// column per metric of any group, with the API's numbers to the digit; a
// metric a report lacks (or reports as null) is an empty cell.
func TestTheMetricsCSVHoldsEveryReportAsTheAPIGivesIt(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	trialID, taskToken := runningTrial(t, m, token)
	trial, err := m.DB.Trial(t.Context(), trialID)
	if err != nil {
		t.Fatal(err)
	}
	post := func(group string, steps int64, metrics string) {
		t.Helper()
		body := fmt.Sprintf(`{"group": %q, "metrics": {"trial_id": %d, "trial_run_id": %d, "steps_completed": %d,
			"metrics": {"avg_metrics": %s}}}`, group, trialID, trial.RunID, steps, metrics)
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
	post("training", 10, `{"loss": 0.69314718055994530941, "lr": 1e-05}`)
	post("training", 20, `{"loss": 0.123456789012345678, "lr": 1e-05}`)
	post("validation", 20, `{"loss": 0.30000000000000004, "accuracy": 0.9}`)
	post("validation", 40, `{"loss": 0.25, "accuracy": null, "top5": 1.5e+300}`)

	// What the CSV must say, from the API's own answer.
	cols := []string{"accuracy", "loss", "lr", "top5"}
	want := [][]string{append([]string{"trial", "group", "steps", "reported_at"}, cols...)}
	for _, group := range []string{"training", "validation"} {
		var got struct {
			Metrics []struct {
				TrialID        int64     `json:"trialId"`
				StepsCompleted int64     `json:"stepsCompleted"`
				Group          string    `json:"group"`
				ReportTime     time.Time `json:"reportTime"`
				Metrics        struct {
					Avg map[string]json.RawMessage `json:"avg_metrics"`
				} `json:"metrics"`
			} `json:"metrics"`
		}
		api(t, m, "GET", "/api/v1/trials/"+itoa(trialID)+"/metrics?group="+group, token, "", &got)
		for _, r := range got.Metrics {
			row := []string{itoa(r.TrialID), r.Group, fmt.Sprint(r.StepsCompleted), r.ReportTime.UTC().Format(time.RFC3339Nano)}
			for _, c := range cols {
				v := string(r.Metrics.Avg[c])
				if v == "null" {
					v = ""
				}
				row = append(row, v)
			}
			want = append(want, row)
		}
	}
	if len(want) != 5 {
		t.Fatalf("the API gave %d reports, want 4", len(want)-1)
	}
	if want[1][5] != "0.6931471805599453" && !strings.HasPrefix(want[1][5], "0.69314718055994") {
		t.Fatalf("the API's loss %q", want[1][5])
	}

	c := signInPages(t, m, "admin", "")
	for _, path := range []string{"/trials/" + itoa(trialID) + "/metrics.csv", "/experiments/" + itoa(trial.ExperimentID) + "/metrics.csv"} {
		resp, body := get(t, c, m, path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("GET %s: %d %q %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
		}
		got, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("%s is no CSV: %v\n%s", path, err, body)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}

	// The experiment page links its download.
	_, body := get(t, c, m, "/experiments/"+itoa(trial.ExperimentID))
	wants(t, "the experiment page", body, `id="metrics-csv" href="/experiments/`+itoa(trial.ExperimentID)+`/metrics.csv"`)
	// And the trial page its own.
	_, body = get(t, c, m, "/trials/"+itoa(trialID))
	wants(t, "the trial page", body, `id="trial-metrics-csv" href="/trials/`+itoa(trialID)+`/metrics.csv"`)

	// A trial that does not exist is a 404, not an empty file.
	if resp, _ := get(t, c, m, "/trials/999999/metrics.csv"); resp.StatusCode != 404 {
		t.Errorf("a missing trial's CSV: %d", resp.StatusCode)
	}
}
