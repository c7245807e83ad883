package handlers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/live"
)

// liveLoad is what the load process of BenchmarkLiveUpdates is given.
type liveLoad struct {
	URL, Token, Cookie string
	Tables             bool // subscribe to table topics and refetch whole series, as before
	Seconds            int
	Trials             []liveTrial
}

type liveTrial struct {
	ID, ExperimentID int64
	Token            string
}

// liveResult is what the load process measured.
type liveResult struct {
	Events, Foreign    int     // events received, and those of no object the page shows
	EventsPerPageSec   float64 // events a page received a second
	LatencyP50, P95    float64 // ms from POST to the trial page's event
	ChartUpdates       int
	BytesPerUpdateMean float64
	BytesPerUpdateP95  float64
	Posts, PostErrors  int
}

// BenchmarkLiveUpdates runs the master with 200 open pages (a trial's and
// an experiment's page for each of 100 trials, each an SSE stream of what
// it shows plus its chart's fetches) while the 100 trials report 10 metrics
// at 1 Hz through the task API, for RESOLUTE_LIVE_SECONDS (default 60). It
// runs the load in a process of its own (this test binary, see
// TestLiveLoad), so that the master's CPU (getrusage of this process over
// the window, % of one core) is the master's alone, and prints it with the
// events a page receives, how many were of objects it does not show, the
// latency from POST to the trial page's event (p50, p95) and the bytes of a
// chart update, once with per-object topics (after_step fetches) and once
// with the table topics of before (every metrics insert wakes every page,
// which fetches its whole downsampled series again).
func BenchmarkLiveUpdates(b *testing.B) {
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("RESOLUTE_LIVE_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	for _, mode := range []string{"objects", "tables"} {
		b.Run(mode, func(b *testing.B) {
			var opts []live.Option
			if mode == "tables" {
				opts = append(opts, live.WithTableTopics())
			}
			m := handlerstest.Start(b, handlerstest.Options{Live: opts})
			token := loginB(b, m)
			load := liveLoad{URL: m.URL, Token: token, Tables: mode == "tables", Seconds: seconds, Cookie: sessionCookie(b, m)}
			for range 100 {
				id, taskToken := runningTrial(b, m, token)
				t, err := m.DB.Trial(b.Context(), id)
				if err != nil {
					b.Fatal(err)
				}
				load.Trials = append(load.Trials, liveTrial{ID: id, ExperimentID: t.ExperimentID, Token: taskToken})
			}
			config, _ := json.Marshal(load)
			time.Sleep(time.Second) // the setup's notifications are told
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^TestLiveLoad$", "-test.count=1")
				cmd.Env = append(os.Environ(), "RESOLUTE_LIVE_LOAD="+string(config))
				cmd.Stderr = os.Stderr
				var before, after syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				start := time.Now()
				out, err := cmd.Output()
				wall := time.Since(start)
				syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				if err != nil {
					b.Fatalf("load: %v\n%s", err, out)
				}
				var res liveResult
				line := out[bytes.LastIndex(out, []byte("LIVE-RESULT "))+len("LIVE-RESULT "):]
				if err := json.Unmarshal(line[:bytes.IndexByte(line, '\n')], &res); err != nil {
					b.Fatalf("load result: %v\n%s", err, out)
				}
				cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
				b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "master-cpu-%")
				b.ReportMetric(res.EventsPerPageSec, "events/page/s")
				b.ReportMetric(float64(res.Foreign)/float64(max(res.Events, 1))*100, "foreign-events-%")
				b.ReportMetric(res.P95, "latency-p95-ms")
				b.ReportMetric(res.BytesPerUpdateMean, "bytes/chart-update")
				b.Logf("%s: master CPU %.1f%% of a core over %s; %d posts (%d failed); %d events to 200 pages (%.2f a page a second, %d of objects the page does not show); POST to event p50 %.0f ms, p95 %.0f ms; %d chart updates, %.0f bytes each (p95 %.0f)",
					mode, 100*cpu.Seconds()/wall.Seconds(), wall.Round(time.Millisecond), res.Posts, res.PostErrors, res.Events, res.EventsPerPageSec,
					res.Foreign, res.LatencyP50, res.P95, res.ChartUpdates, res.BytesPerUpdateMean, res.BytesPerUpdateP95)
			}
		})
	}
}

// sessionCookie signs admin in through the form and returns the session
// cookie as a Cookie header.
func sessionCookie(b *testing.B, m *handlerstest.Master) string {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(m.URL+"/login", map[string][]string{"username": {"admin"}, "password": {""}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	var parts []string
	for _, ck := range resp.Cookies() {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// TestLiveLoad is BenchmarkLiveUpdates' load, run in a process of its own
// with RESOLUTE_LIVE_LOAD; otherwise it is skipped.
func TestLiveLoad(t *testing.T) {
	config := os.Getenv("RESOLUTE_LIVE_LOAD")
	if config == "" {
		t.Skip("the load of BenchmarkLiveUpdates")
	}
	var load liveLoad
	if err := json.Unmarshal([]byte(config), &load); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 500, MaxConnsPerHost: 0}}
	var mu sync.Mutex
	var res liveResult
	var latencies, sizes []float64
	pending := map[int64][]time.Time{} // posts of a trial not told yet
	stop := time.Now().Add(time.Duration(load.Seconds) * time.Second)
	var wg sync.WaitGroup

	// The pages: a stream each, and a chart that fetches on each event.
	page := func(trial liveTrial, experimentPage bool) {
		defer wg.Done()
		topics := []string{live.Object("trial", trial.ID)}
		chart := fmt.Sprintf("%s/api/v1/trials/%d/metrics?group=training&metric=m0&max_points=1000", load.URL, trial.ID)
		if experimentPage {
			topics = []string{live.Object("experiment", trial.ExperimentID)}
			chart = fmt.Sprintf("%s/api/v1/experiments/%d/metrics?group=training&metric=m0&max_points=1000", load.URL, trial.ExperimentID)
		}
		if load.Tables { // what the pages subscribed to before
			topics = []string{"trials", "allocations", "checkpoints", "metrics"}
			if experimentPage {
				topics = []string{"experiments", "trials", "checkpoints", "metrics"}
			}
		}
		req, _ := http.NewRequest("GET", load.URL+"/events?topics="+strings.Join(topics, ","), nil)
		req.Header.Set("Cookie", load.Cookie)
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("events: %v %v", err, resp)
			return
		}
		go func() {
			<-time.After(time.Until(stop))
			resp.Body.Close()
		}()
		lastStep := int64(-1)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			topic, ok := strings.CutPrefix(lines.Text(), "data: ")
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			res.Events++
			if !load.Tables && !slices.Contains(topics, topic) {
				res.Foreign++
			}
			if !experimentPage {
				for _, sent := range pending[trial.ID] {
					latencies = append(latencies, float64(now.Sub(sent).Microseconds())/1000)
				}
				delete(pending, trial.ID)
			}
			mu.Unlock()
			if load.Tables && topic != "metrics" {
				continue
			}
			u := chart
			if !load.Tables && lastStep >= 0 {
				u += "&after_step=" + strconv.FormatInt(lastStep, 10)
			}
			creq, _ := http.NewRequest("GET", u, nil)
			creq.Header.Set("Authorization", "Bearer "+load.Token)
			cresp, err := client.Do(creq)
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(cresp.Body)
			cresp.Body.Close()
			if cresp.StatusCode != 200 {
				t.Errorf("chart: %d %s", cresp.StatusCode, body)
				continue
			}
			lastStep = max(lastStep, lastStepOf(body))
			mu.Lock()
			res.ChartUpdates++
			sizes = append(sizes, float64(len(body)))
			mu.Unlock()
		}
	}
	for _, tr := range load.Trials {
		wg.Add(2)
		go page(tr, false)
		go page(tr, true)
	}
	time.Sleep(500 * time.Millisecond) // the streams are open

	// The trials: 10 metrics at 1 Hz each, spread over the second.
	for _, tr := range load.Trials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for step := 1; time.Now().Add(time.Second).Before(stop); step++ {
				values := map[string]float64{}
				for i := range 10 {
					values[fmt.Sprintf("m%d", i)] = rand.Float64()
				}
				body, _ := json.Marshal(map[string]any{"group": "training", "metrics": map[string]any{
					"trial_id": tr.ID, "trial_run_id": 0, "steps_completed": step, "metrics": map[string]any{"avg_metrics": values}}})
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/trials/%d/metrics", load.URL, tr.ID), bytes.NewReader(body))
				req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+tr.Token)
				sent := time.Now()
				mu.Lock()
				pending[tr.ID] = append(pending[tr.ID], sent)
				res.Posts++
				mu.Unlock()
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != 200 {
					mu.Lock()
					res.PostErrors++
					mu.Unlock()
				}
				<-tick.C
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(latencies)
	slices.Sort(sizes)
	if len(latencies) > 0 {
		res.LatencyP50, res.P95 = latencies[len(latencies)/2], latencies[len(latencies)*95/100]
	}
	if len(sizes) > 0 {
		sum := 0.0
		for _, s := range sizes {
			sum += s
		}
		res.BytesPerUpdateMean, res.BytesPerUpdateP95 = sum/float64(len(sizes)), sizes[len(sizes)*95/100]
	}
	res.EventsPerPageSec = float64(res.Events) / float64(2*len(load.Trials)) / float64(load.Seconds)
	if load.Tables {
		// A table topic does not say which trial reported: each report
		// concerns two pages (its trial's and its experiment's), the rest
		// of the events woke pages for other trials' reports.
		res.Foreign = max(0, res.Events-2*res.Posts)
	}
	out, _ := json.Marshal(res)
	fmt.Printf("LIVE-RESULT %s\n", out)
}

// lastStepOf is the last step in a chart's answer, of a trial or an
// experiment.
func lastStepOf(body []byte) int64 {
	var got struct {
		Metrics []struct{ StepsCompleted int64 }
		Trials  []struct {
			Points []struct{ StepsCompleted int64 }
		}
	}
	json.Unmarshal(body, &got)
	last := int64(-1)
	for _, r := range got.Metrics {
		last = max(last, r.StepsCompleted)
	}
	for _, t := range got.Trials {
		for _, p := range t.Points {
			last = max(last, p.StepsCompleted)
		}
	}
	return last
}
