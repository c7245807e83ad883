package e2e

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
)

// metricsToken is the observability.metrics_token of the scraped master.
const metricsToken = "scrape-token-0123456789abcdef"

// scrape reads the master's /metrics with a bearer token ("" for none) and
// returns the status and, on 200, the parsed series.
func scrape(t *testing.T, m *mastertest.Master, bearer string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL+"/metrics", nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	must(t, err)
	return resp.StatusCode, fams
}

// value is the value of the series of family name whose labels include
// want, and whether there is one; counters, gauges and histograms' counts.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestPrometheusScrapesTheMastersSeriesAndTheyMove starts the master as a
// process with /metrics on and a metrics token, checks who may scrape it
// (the token and administrators; not anonymous callers, not other users,
// not a wrong token), and watches the series move: API requests counted by
// route pattern, admission cycles, the slots and allocations of the pool
// while a profiled trial runs, its metric reports and its profiler's
// system metrics per trial.
func TestPrometheusScrapesTheMastersSeriesAndTheyMove(t *testing.T) {
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", filepath.Join(mastertest.TempDir(t), "data"), "--resource-manager-slots", "2",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable",
		"--observability-enable-prometheus", "true", "--observability-metrics-token", metricsToken)
	m.Start()
	admin := m.Login("admin")
	if code := m.Call("POST", "/api/v1/users", admin, resolute.CreateUserRequest{
		User: resolute.UserSpec{Username: "viewer"}, Password: "viewer-password-1"}, nil); code != 200 {
		t.Fatalf("create user: %d", code)
	}
	var login resolute.LoginResponse
	m.Call("POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: "viewer", Password: "viewer-password-1"}, &login)

	for name, tc := range map[string]struct {
		bearer string
		want   int
	}{
		"no credentials are refused with 401":     {"", 401},
		"a wrong token is refused with 401":       {metricsToken + "x", 401},
		"a user who is no administrator gets 403": {login.Token, 403},
		"an administrator's API token reads it":   {admin, 200},
		"the metrics token reads it":              {metricsToken, 200},
	} {
		if code, _ := scrape(t, m, tc.bearer); code != tc.want {
			t.Errorf("%s: GET /metrics = %d, want %d", name, code, tc.want)
		}
	}

	_, before := scrape(t, m, metricsToken)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "resolute_database_up",
		"resolute_database_connections", "resolute_slots", "resolute_sse_clients", "resolute_proxy_bytes_total",
		"resolute_metric_reports_total", "resolute_scheduler_cycle_seconds", "resolute_scheduler_queue_length"} {
		if before[name] == nil {
			t.Errorf("no series %s", name)
		}
	}
	if up, _ := value(before, "resolute_database_up", nil); up != 1 {
		t.Errorf("resolute_database_up = %v, want 1", up)
	}
	if slots, _ := value(before, "resolute_slots", map[string]string{"pool": "default", "slot_type": "cpu"}); slots != 2 {
		t.Errorf("resolute_slots{pool=default} = %v, want 2", slots)
	}

	// Requests are counted by their route's pattern, not their path.
	me := map[string]string{"method": "GET", "route": "/api/v1/experiments/{id}", "code": "404"}
	n0, _ := value(before, "resolute_http_requests_total", me)
	for i := range 3 {
		m.Call("GET", "/api/v1/experiments/"+strconv.Itoa(900+i), admin, nil, nil)
	}
	_, after := scrape(t, m, metricsToken)
	if n1, _ := value(after, "resolute_http_requests_total", me); n1 != n0+3 {
		t.Errorf("requests to /api/v1/experiments/{id} answered 404: %v then %v, want 3 more", n0, n1)
	}
	if _, ok := value(after, "resolute_http_requests_total", map[string]string{"route": "/api/v1/experiments/900"}); ok {
		t.Error("a request's path became a label; only route patterns may")
	}

	// A profiled trial: its reports and its profiler's samples show.
	cfg := "name: scraped\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n" +
		"profiling: {enabled: true}\nmax_restarts: 0\nresources: {slots_per_trial: 1}\n"
	var created resolute.ExperimentResponse
	if code := m.Call("POST", "/api/v1/experiments", admin, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg},
		ContextTgz:              packFiles(t, map[string]string{"train.py": profiledTrial})}, &created); code != 200 {
		t.Fatalf("create experiment: %d\n%s", code, m.Output())
	}
	t.Cleanup(func() {
		m.Call("POST", "/api/v1/experiments/"+strconv.FormatInt(created.Experiment.ID, 10)+"/kill", admin, nil, nil)
	})
	reports0, _ := value(after, "resolute_metric_reports_total", nil)
	cycles0, _ := value(after, "resolute_scheduler_cycle_seconds", nil)
	deadline := time.Now().Add(3 * time.Minute)
	var last map[string]*dto.MetricFamily
	for {
		_, last = scrape(t, m, metricsToken)
		running, _ := value(last, "resolute_allocations", map[string]string{"pool": "default", "state": "running"})
		used, _ := value(last, "resolute_slots_used", map[string]string{"pool": "default"})
		reports, _ := value(last, "resolute_metric_reports_total", nil)
		cycles, _ := value(last, "resolute_scheduler_cycle_seconds", nil)
		_, cpu := value(last, "resolute_trial_system_metric", map[string]string{"group": "cpu"})
		if running == 1 && used == 1 && reports > reports0 && cycles > cycles0 && cpu {
			break
		}
		if time.Now().After(deadline) {
			logs := m.Get("/api/v1/trials/1/logs", admin) // the trial's own lines say why it ended, when it did
			t.Fatalf("the series did not move in 3 minutes: running %v, slots used %v, reports %v (from %v), cycles %v (from %v), trial cpu series %v\n%s\ntrial logs:\n%s",
				running, used, reports, reports0, cycles, cycles0, cpu, m.Output(), logs)
		}
		time.Sleep(time.Second) // polling an outside scraper's view, as Prometheus would
	}
	var trials resolute.TrialsResponse
	m.Call("GET", "/api/v1/experiments/"+strconv.FormatInt(created.Experiment.ID, 10)+"/trials", admin, nil, &trials)
	if len(trials.Trials) != 1 {
		t.Fatalf("trials: %+v", trials)
	}
	tid := strconv.FormatInt(trials.Trials[0].ID, 10)
	if _, ok := value(last, "resolute_trial_system_metric", map[string]string{"trial_id": tid, "group": "memory"}); !ok {
		t.Errorf("no memory series of trial %s:\n%v", tid, strings.Join(familyLines(last["resolute_trial_system_metric"]), "\n"))
	}
}

// familyLines prints a family's series, for failure messages.
func familyLines(f *dto.MetricFamily) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, m := range f.Metric {
		out = append(out, m.String())
	}
	return out
}
