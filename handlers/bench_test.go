package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// runningTrial makes an experiment whose trial has a running allocation with
// a token the benchmark knows, without starting a process.
func runningTrial(b testing.TB, m *handlerstest.Master, token string) (int64, string) {
	b.Helper()
	var e resolute.ExperimentResponse
	cfg := "name: bench\nentrypoint: sleep 1000\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 0}\n"
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, Activate: new(bool)}
	body, _ := json.Marshal(req)
	r, _ := http.NewRequest("POST", m.URL+"/api/v1/experiments", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	ctx := context.Background()
	trials, _ := m.DB.Trials(ctx, e.Experiment.ID)
	trialID := trials[0].ID
	taskToken, hash := auth.NewToken()
	id := fmt.Sprintf("bench-%d", trialID)
	if err := m.DB.CreateAllocation(ctx, id, resolute.TrialTaskID(trialID), &trialID, 0); err != nil {
		b.Fatal(err)
	}
	if _, err := m.DB.StartAllocation(ctx, id, nil, hash); err != nil {
		b.Fatal(err)
	}
	return trialID, taskToken
}

// BenchmarkMetricIngestion reports training metrics through the task API as
// the harness sends them, from 16 concurrent clients, 50 values a report,
// and prints values stored per second.
func BenchmarkMetricIngestion(b *testing.B) {
	benchmarkMetricIngestion(b, [3]string{"trial_id", "trial_run_id", "steps_completed"}, "avg_metrics")
}

// BenchmarkMetricIngestionCamelCase is BenchmarkMetricIngestion with the
// reports' field names in camelCase, as Determined's own Python bindings
// send them (the API renames them to the handler's).
func BenchmarkMetricIngestionCamelCase(b *testing.B) {
	benchmarkMetricIngestion(b, [3]string{"trialId", "trialRunId", "stepsCompleted"}, "avgMetrics")
}

func benchmarkMetricIngestion(b *testing.B, ids [3]string, avgKey string) {
	m := handlerstest.Start(b, handlerstest.Options{})
	token := loginB(b, m)
	trialID, taskToken := runningTrial(b, m, token)
	metrics := map[string]float64{}
	for i := 0; i < 50; i++ {
		metrics[fmt.Sprintf("m%02d", i)] = float64(i) / 7
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				step := next.Add(1)
				if step > int64(b.N) {
					return
				}
				body, _ := json.Marshal(map[string]any{"group": "training", "metrics": map[string]any{
					ids[0]: trialID, ids[1]: 0, ids[2]: step,
					"metrics": map[string]any{avgKey: metrics}}})
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/trials/%d/metrics", m.URL, trialID), bytes.NewReader(body))
				req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N*50)/secs, "values/s")
	b.ReportMetric(float64(b.N)/secs, "reports/s")
}

// BenchmarkCreateExperiment creates experiments through the API one after
// another and prints the p99 latency.
func BenchmarkCreateExperiment(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{})
	token := loginB(b, m)
	cfg := "name: bench\nentrypoint: python3 train.py\nhyperparameters: {lr: {type: log, minval: -4, maxval: -1}}\n" +
		"searcher: {name: random, metric: loss, max_trials: 4}\n"
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, Activate: new(bool)}
	body, _ := json.Marshal(req)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, _ := http.NewRequest("POST", m.URL+"/api/v1/experiments", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

func loginB(b *testing.B, m *handlerstest.Master) string {
	body, _ := json.Marshal(resolute.LoginRequest{Username: "admin"})
	resp, err := http.Post(m.URL+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out resolute.LoginResponse
	json.NewDecoder(resp.Body).Decode(&out)
	return out.Token
}

// BenchmarkASHA100Trials runs an adaptive_asha search of 100 trials of a
// trivial script on the local resource manager and prints how many trials
// reached each rung of the main bracket next to the searcher's plan.
func BenchmarkASHA100Trials(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{Slots: 4})
	token := loginB(b, m)
	cfg := `
name: asha-100
entrypoint: python3 train.py
hyperparameters: {x: {type: double, minval: 0.1, maxval: 10}}
searcher: {name: adaptive_asha, metric: loss, max_trials: 100, max_time: 64, time_metric: batches,
           divisor: 4, max_rungs: 3, mode: aggressive, max_concurrent_trials: 4}
max_restarts: 0
`
	var tgz bytes.Buffer
	packTestdata(b, "testdata/asha-trivial", &tgz)
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, ContextTgz: tgz.Bytes()}
	body, _ := json.Marshal(req)
	r, _ := http.NewRequest("POST", m.URL+"/api/v1/experiments", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	var created resolute.ExperimentResponse
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	start := time.Now()
	ctx := context.Background()
	for {
		e, err := m.DB.Experiment(ctx, created.Experiment.ID)
		if err != nil {
			b.Fatal(err)
		}
		if resolute.Terminal(e.State) {
			if e.State != resolute.StateCompleted {
				b.Fatalf("search ended %s", e.State)
			}
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatal("the search did not finish in 10 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	trials, _ := m.DB.Trials(ctx, created.Experiment.ID)
	reached := map[int64]int{}
	for _, t := range trials {
		reports, _ := m.DB.TrialMetrics(ctx, t.ID, "validation")
		for _, target := range []int64{4, 16, 64} {
			for _, rep := range reports {
				if rep.StepsCompleted >= target {
					reached[target]++
					break
				}
			}
		}
	}
	b.ReportMetric(float64(len(trials)), "trials")
	b.ReportMetric(float64(reached[4]), "rung1")
	b.ReportMetric(float64(reached[16]), "rung2")
	b.ReportMetric(float64(reached[64]), "rung3")
	b.ReportMetric(time.Since(start).Seconds(), "seconds")
	if len(trials) != 100 {
		b.Fatalf("%d trials, want 100", len(trials))
	}
}

func packTestdata(b *testing.B, dir string, w io.Writer) {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
}

// BenchmarkSubmitToRunning measures the time from POST /api/v1/experiments
// to the trial's allocation RUNNING on free slots, and from a queue move to
// the scheduler acting on it.
func BenchmarkSubmitToRunning(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{Slots: 1})
	token := loginB(b, m)
	ctx := context.Background()
	cfg := "name: s\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n"
	var worst, total time.Duration
	for i := 0; i < b.N; i++ {
		body, _ := json.Marshal(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}})
		start := time.Now()
		r, _ := http.NewRequest("POST", m.URL+"/api/v1/experiments", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		var e resolute.ExperimentResponse
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		for {
			trials, _ := m.DB.Trials(ctx, e.Experiment.ID)
			if len(trials) == 1 {
				if a, err := m.DB.CurrentTrialAllocation(ctx, trials[0].ID); err == nil && a.State == resolute.AllocationRunning {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		d := time.Since(start)
		total += d
		worst = max(worst, d)
		if err := m.Experiments.SetState(ctx, authz.System, e.Experiment.ID, "kill"); err != nil {
			b.Fatal(err)
		}
		for len(m.RM.FreeSlots()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(600 * time.Millisecond) // let the kill settle before the next one
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-running")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
