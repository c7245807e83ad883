package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// postAsTask posts body to path with a task's allocation token and returns
// the status.
func postAsTask(t *testing.T, m *handlerstest.Master, path, taskToken, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL+path, strings.NewReader(body))
	req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// profilerBody is a report as the harness's profiler (and Determined's)
// posts it: one group, the metrics keyed by agent id, a report time, no
// step.
func profilerBody(trialID int64, runID int, group string, at time.Time, metrics string) string {
	return fmt.Sprintf(`{"group": %q, "metrics": {"trial_id": %d, "trial_run_id": %d, "report_time": %q,
		"metrics": {"avg_metrics": {"agent-1": %s}}}}`, group, trialID, runID, at.Format(time.RFC3339Nano), metrics)
}

func TestSystemMetricsAreStoredApartFromTrainingMetricsAndServedByGroup(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	trialID, taskToken := runningTrial(t, m, token)
	trial, err := m.DB.Trial(t.Context(), trialID)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/trials/" + itoa(trialID) + "/metrics"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reports := []struct {
		group string
		at    time.Time
		body  string
	}{
		{"cpu", t0, `{"cpu_util_simple": 12.5}`},
		{"cpu", t0, `{"cpu_util_simple": 12.5}`}, // the harness retrying a POST that timed out
		{"cpu", t0.Add(10 * time.Second), `{"cpu_util_simple": 99}`},
		{"memory", t0, `{"memory_free": 3.25}`},
		{"disk", t0, `{"disk_iops": 4, "disk_throughput_read": 1024, "disk_throughput_write": 0, "/": {"disk_util": 41.5}}`},
		{"network", t0, `{"net_throughput_sent": 10, "net_throughput_recv": 20}`},
		{"gpu", t0, `{"GPU-abc": {"gpu_util": 87, "gpu_free_memory": 1073741824}}`},
	}
	for _, r := range reports {
		if code := postAsTask(t, m, path, taskToken, profilerBody(trialID, trial.RunID, r.group, r.at, r.body)); code != 200 {
			t.Fatalf("POST %s: %d", r.group, code)
		}
	}

	var cpu resolute.MetricsResponse
	if code := api(t, m, "GET", path+"?group=cpu", token, "", &cpu); code != 200 {
		t.Fatalf("GET cpu: %d", code)
	}
	type point struct {
		Group, At string
		Run       int
		Avg       map[string]map[string]any
	}
	points := func(rs []resolute.MetricsReport) []point {
		var out []point
		for _, r := range rs {
			var m struct {
				Avg map[string]map[string]any `json:"avg_metrics"`
			}
			if err := json.Unmarshal(r.Metrics, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, point{r.Group, r.ReportedAt.UTC().Format(time.RFC3339), r.TrialRunID, m.Avg})
		}
		return out
	}
	want := []point{
		{"cpu", "2026-01-02T03:04:05Z", trial.RunID, map[string]map[string]any{"agent-1": {"cpu_util_simple": 12.5}}},
		{"cpu", "2026-01-02T03:04:15Z", trial.RunID, map[string]map[string]any{"agent-1": {"cpu_util_simple": 99.0}}},
	}
	if diff := cmp.Diff(want, points(cpu.Metrics)); diff != "" {
		t.Errorf("GET ?group=cpu (-want +got):\n%s", diff)
	}
	var gpu, disk resolute.MetricsResponse
	api(t, m, "GET", path+"?group=gpu", token, "", &gpu)
	api(t, m, "GET", path+"?group=disk", token, "", &disk)
	wantGPU := []point{{"gpu", "2026-01-02T03:04:05Z", trial.RunID,
		map[string]map[string]any{"agent-1": {"GPU-abc": map[string]any{"gpu_util": 87.0, "gpu_free_memory": 1073741824.0}}}}}
	if diff := cmp.Diff(wantGPU, points(gpu.Metrics)); diff != "" {
		t.Errorf("GET ?group=gpu (-want +got):\n%s", diff)
	}
	if got := points(disk.Metrics); len(got) != 1 || got[0].Avg["agent-1"]["/"].(map[string]any)["disk_util"] != 41.5 {
		t.Errorf("GET ?group=disk: %+v", got)
	}
	// A chart asks for about as many points as it is wide.
	var one resolute.MetricsResponse
	api(t, m, "GET", path+"?group=cpu&max_points=1", token, "", &one)
	if len(one.Metrics) != 1 || !one.Metrics[0].ReportedAt.Equal(t0.Add(10*time.Second)) {
		t.Errorf("max_points=1 kept %+v, want the last report alone", one.Metrics)
	}

	// Stored apart: no training-style group, step or chart of them.
	groups, err := m.DB.TrialMetricGroups(t.Context(), trialID)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 0 {
		t.Errorf("the trial's metric groups are %v, want none: system metrics are not per batch", groups)
	}
	sys, err := m.DB.TrialSystemMetricGroups(t.Context(), trialID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cpu", "disk", "gpu", "memory", "network"}, sys); diff != "" {
		t.Errorf("system metric groups (-want +got):\n%s", diff)
	}
	if tr, _ := m.DB.Trial(t.Context(), trialID); tr.StepsCompleted != 0 {
		t.Errorf("system metrics moved the trial to step %d", tr.StepsCompleted)
	}
}

func TestSystemMetricsReportsThatAreNotAProfilersAreRefused(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	trialID, taskToken := runningTrial(t, m, token)
	otherID, otherToken := runningTrial(t, m, token)
	trial, _ := m.DB.Trial(t.Context(), trialID)
	path := "/api/v1/trials/" + itoa(trialID) + "/metrics"
	at := time.Now()
	tests := map[string]struct {
		token, body string
		want        int
	}{
		"a flat report, as training metrics are sent": {taskToken,
			fmt.Sprintf(`{"group": "cpu", "metrics": {"trial_id": %d, "metrics": {"avg_metrics": {"cpu_util_simple": 3}}}}`, trialID), 400},
		"a value that is not a number": {taskToken, profilerBody(trialID, trial.RunID, "cpu", at, `{"cpu_util_simple": "high"}`), 400},
		"a report for an earlier run":  {taskToken, profilerBody(trialID, trial.RunID+5, "cpu", at, `{"cpu_util_simple": 1}`), 400},
		"another trial's task":         {otherToken, profilerBody(trialID, trial.RunID, "cpu", at, `{"cpu_util_simple": 1}`), 403},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if code := postAsTask(t, m, path, tc.token, tc.body); code != tc.want {
				t.Errorf("status %d, want %d", code, tc.want)
			}
		})
	}
	var got resolute.MetricsResponse
	api(t, m, "GET", path+"?group=cpu", token, "", &got)
	if len(got.Metrics) != 0 {
		t.Errorf("refused reports were stored: %+v", got.Metrics)
	}
	_ = otherID
}
