package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// tgz packs a directory as the CLI does.
func tgz(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, _ := os.ReadFile(p)
		tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
		return nil
	})
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// waitFor polls an experiment until it reaches a final state.
func waitFor(t *testing.T, m *handlerstest.Master, token string, id int64, timeout time.Duration) resolute.Experiment {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var e resolute.ExperimentResponse
		api(t, m, "GET", "/api/v1/experiments/"+itoa(id), token, "", &e)
		if resolute.Terminal(e.Experiment.State) || time.Now().After(deadline) {
			return e.Experiment
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestTheStdlibExampleRunsToCompletion(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	dir := "../examples/core-api-stdlib"
	config, err := os.ReadFile(filepath.Join(dir, "const.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: string(config),
		Overrides: []string{"hyperparameters.max_steps=100"}}, ContextTgz: tgz(t, dir)}
	var created resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	e := waitFor(t, m, token, created.Experiment.ID, 90*time.Second)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/trials", token, "", &trials)
	if e.State != resolute.StateCompleted || len(trials.Trials) != 1 {
		logs := trialLogs(t, m, token, trials)
		t.Fatalf("experiment %s with %d trials; logs:\n%s", e.State, len(trials.Trials), logs)
	}
	trial := trials.Trials[0]
	if trial.StepsCompleted != 100 || trial.BestValidation == nil || trial.LatestCheckpoint == "" {
		t.Fatalf("trial %+v", trial)
	}
	var metrics resolute.MetricsResponse
	api(t, m, "GET", "/api/v1/trials/"+itoa(trial.ID)+"/metrics?group=validation", token, "", &metrics)
	if len(metrics.Metrics) != 4 {
		t.Fatalf("%d validation reports, want 4 (every 25 of 100 steps)", len(metrics.Metrics))
	}
	// The checkpoints the policy does not keep go in a CHECKPOINT_GC task
	// queued when the trial ended: wait for it.
	var cps resolute.CheckpointsResponse
	var entries []os.DirEntry
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/checkpoints", token, "", &cps)
		entries, _ = os.ReadDir(m.CheckpointDir)
		if n := len(cps.Checkpoints); n > 0 && n <= 2 && len(entries) == n || time.Now().After(deadline) {
			break
		}
	}
	if len(cps.Checkpoints) == 0 || len(cps.Checkpoints) > 2 || cps.Checkpoints[0].Validation == nil {
		t.Fatalf("after GC (best and latest of the trial) %d checkpoints: %+v", len(cps.Checkpoints), cps.Checkpoints)
	}
	if len(entries) != len(cps.Checkpoints) {
		t.Fatalf("%d checkpoint directories in storage, %d checkpoints kept", len(entries), len(cps.Checkpoints))
	}
	// The checkpoint downloads as a tar holding the model.
	req2, _ := http.NewRequest("GET", m.URL+"/api/v1/checkpoints/"+trial.LatestCheckpoint+"/download", nil)
	req2.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req2)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download: %v %v", resp, err)
	}
	tr := tar.NewReader(resp.Body)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	resp.Body.Close()
	if !strings.Contains(strings.Join(names, " "), "metadata.json") {
		t.Fatalf("checkpoint tar holds %v", names)
	}
	if logs := trialLogs(t, m, token, trials); !strings.Contains(logs, "validation_loss") && !strings.Contains(logs, "steps") {
		t.Logf("logs:\n%s", logs)
	}
}

func trialLogs(t *testing.T, m *handlerstest.Master, token string, trials resolute.TrialsResponse) string {
	var out strings.Builder
	for _, tr := range trials.Trials {
		req, _ := http.NewRequest("GET", m.URL+"/api/v1/trials/"+itoa(tr.ID)+"/logs", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		dec := json.NewDecoder(resp.Body)
		for {
			var l struct{ Result resolute.TaskLog }
			if dec.Decode(&l) != nil {
				break
			}
			out.WriteString(l.Result.Log + "\n")
		}
		resp.Body.Close()
	}
	return out.String()
}

func TestATaskReachesOnlyItsOwnTrial(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	token := login(t, m, "admin", "")
	cfg := "name: x\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"
	var a, b resolute.ExperimentResponse
	api(t, m, "POST", "/api/v1/experiments", token, jsonBody(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}}), &a)
	api(t, m, "POST", "/api/v1/experiments", token, jsonBody(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}}), &b)
	var ta, tb resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(a.Experiment.ID)+"/trials", token, "", &ta)
	api(t, m, "GET", "/api/v1/experiments/"+itoa(b.Experiment.ID)+"/trials", token, "", &tb)
	// Give trial A's allocation a token we know, as if it had started.
	ctx := context.Background()
	allocs, _ := m.DB.TrialAllocations(ctx, ta.Trials[0].ID)
	if len(allocs) == 0 {
		t.Fatal("no allocation")
	}
	taskToken, hash := auth.NewToken()
	m.DB.EndAllocation(ctx, allocs[0].ID, nil, "replaced by the test")
	id := "test-alloc"
	trialID := ta.Trials[0].ID
	if err := m.DB.CreateAllocation(ctx, id, "trial-"+itoa(trialID), &trialID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DB.StartAllocation(ctx, id, nil, hash); err != nil {
		t.Fatal(err)
	}
	report := func(trial int64) int {
		req, _ := http.NewRequest("POST", m.URL+"/api/v1/trials/"+itoa(trial)+"/progress", strings.NewReader(`{"progress": 0.5}`))
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := report(ta.Trials[0].ID); code != 200 {
		t.Fatalf("own trial: %d", code)
	}
	if code := report(tb.Trials[0].ID); code != 403 {
		t.Fatalf("another trial: %d, want 403", code)
	}
	api(t, m, "POST", "/api/v1/experiments/"+itoa(a.Experiment.ID)+"/kill", token, "", nil)
	api(t, m, "POST", "/api/v1/experiments/"+itoa(b.Experiment.ID)+"/kill", token, "", nil)
}

func TestThePreemptionLongPollAnswersWhenTheExperimentPauses(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	token := login(t, m, "admin", "")
	cfg := "name: x\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 0}\n"
	var e resolute.ExperimentResponse
	api(t, m, "POST", "/api/v1/experiments", token, jsonBody(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}}), &e)
	ctx := context.Background()
	var alloc resolute.Allocation
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		trials, _ := m.DB.Trials(ctx, e.Experiment.ID)
		if len(trials) == 1 {
			if a, err := m.DB.CurrentTrialAllocation(ctx, trials[0].ID); err == nil && a.State == resolute.AllocationRunning {
				alloc = a
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if alloc.ID == "" {
		t.Fatal("the trial did not start")
	}
	// Swap in a token the test knows for the running allocation.
	taskToken, hash := auth.NewToken()
	if _, err := m.DB.EndAllocation(ctx, alloc.ID, nil, "test"); err != nil {
		t.Fatal(err)
	}
	trialID := *alloc.TrialID
	m.DB.CreateAllocation(ctx, "poll-1", alloc.TaskID, &trialID, 0)
	m.DB.StartAllocation(ctx, "poll-1", nil, hash)
	poll := func(timeout string) (bool, time.Duration) {
		start := time.Now()
		req, _ := http.NewRequest("GET", m.URL+"/api/v1/allocations/poll-1/signals/preemption?timeout_seconds="+timeout, nil)
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Preempt bool }
		json.NewDecoder(resp.Body).Decode(&out)
		return out.Preempt, time.Since(start)
	}
	if p, _ := poll("0"); p {
		t.Fatal("preempt before the pause")
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		api(t, m, "POST", "/api/v1/experiments/"+itoa(e.Experiment.ID)+"/pause", token, "", nil)
	}()
	p, took := poll("30")
	if !p || took > 5*time.Second {
		t.Fatalf("long poll: preempt %v after %v", p, took)
	}
	req, _ := http.NewRequest("POST", m.URL+"/api/v1/allocations/poll-1/signals/ack_preemption", nil)
	req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ack: %v %v", resp, err)
	}
	resp.Body.Close()
	if a, _ := m.DB.Allocation(ctx, "poll-1"); !a.PreemptAcked {
		t.Fatal("the ack is not recorded")
	}
}

// fetchLogs reads an NDJSON log stream.
func fetchLogs(t *testing.T, m *handlerstest.Master, token, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	dec := json.NewDecoder(resp.Body)
	for {
		var l struct{ Result resolute.TaskLog }
		if dec.Decode(&l) != nil {
			break
		}
		out.WriteString(l.Result.Log + "\n")
	}
	return out.String()
}
