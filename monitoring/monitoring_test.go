package monitoring

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/resolute-ml/resolute"
)

// fakeSources is a master with one pool of two GPU slots, one of them
// busy, and one running trial that reported cpu and gpu samples.
func fakeSources(dbErr error) Sources {
	return Sources{
		Pools: func() []resolute.ResourcePool {
			return []resolute.ResourcePool{{Name: "gpu", SlotType: "cuda", Slots: make([]resolute.Slot, 2), SlotsUsed: 1}}
		},
		Agents: func() []resolute.Agent {
			return []resolute.Agent{{ID: "local", Slots: []resolute.Slot{
				{ID: 0, Usage: &resolute.GPUUsage{UUID: "GPU-a", UtilizationPercent: 87, MemoryUsedBytes: 3 << 30, MemoryTotalBytes: 80 << 30}},
				{ID: 1}, // not sampled yet: no series
			}}}
		},
		Ping:          func(context.Context) error { return dbErr },
		DatabaseConns: func() (int32, int32, int32, int32) { return 2, 3, 5, 16 },
		TrialSystemMetrics: func(context.Context) ([]resolute.SystemMetricsReport, error) {
			return []resolute.SystemMetricsReport{
				{TrialID: 7, Group: "cpu", AgentID: "local", Metrics: json.RawMessage(`{"cpu_util_simple": 12.5}`)},
				{TrialID: 7, Group: "gpu", AgentID: "local", Metrics: json.RawMessage(`{"GPU-a": {"gpu_util": 90, "gpu_free_memory": 1e9}, "note": "x"}`)},
			}, dbErr
		},
		MetricReports: func() uint64 { return 41 },
		SSEClients:    func() int { return 3 },
		ProxyBytes:    func() (uint64, uint64) { return 100, 2000 },
	}
}

// gather returns every sample as "name{labels} value" lines' parts.
func gather(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.Metric {
			out[f.GetName()+labelString(s)] = valueOf(s)
		}
	}
	return out
}

func labelString(s *dto.Metric) string {
	if len(s.Label) == 0 {
		return ""
	}
	var parts []string
	for _, l := range s.Label {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func valueOf(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return s.GetUntyped().GetValue()
}

func TestTheSeriesSayWhatTheSourcesHold(t *testing.T) {
	m := New()
	m.Read(fakeSources(nil))
	m.ObserveRequest("GET", "/api/v1/trials/{id}", 200, 20*time.Millisecond)
	m.ObserveRequest("GET", "/api/v1/trials/{id}", 200, 30*time.Millisecond)
	m.ObserveRequest("BREW", "", 404, time.Millisecond)
	m.ObserveCycle(3*time.Millisecond, map[string]PoolCounts{"gpu": {Pending: 4, Running: 1, Preempting: 1}, "cpu": {}})
	got := gather(t, m)
	want := map[string]float64{
		"resolute_slots{pool=gpu,slot_type=cuda}":                                                         2,
		"resolute_slots_used{pool=gpu,slot_type=cuda}":                                                    1,
		"resolute_gpu_utilization_percent{agent=local,gpu=0,uuid=GPU-a}":                                  87,
		"resolute_gpu_memory_used_bytes{agent=local,gpu=0,uuid=GPU-a}":                                    3 << 30,
		"resolute_gpu_memory_total_bytes{agent=local,gpu=0,uuid=GPU-a}":                                   80 << 30,
		"resolute_database_up":                                                                            1,
		"resolute_database_connections{state=acquired}":                                                   2,
		"resolute_database_connections{state=max}":                                                        16,
		"resolute_trial_system_metric{agent=local,gpu=,group=cpu,metric=cpu_util_simple,trial_id=7}":      12.5,
		"resolute_trial_system_metric{agent=local,gpu=GPU-a,group=gpu,metric=gpu_util,trial_id=7}":        90,
		"resolute_trial_system_metric{agent=local,gpu=GPU-a,group=gpu,metric=gpu_free_memory,trial_id=7}": 1e9,
		"resolute_scrape_errors{part=trial_system_metrics}":                                               0,
		"resolute_metric_reports_total":                                                                   41,
		"resolute_sse_clients":                                                                            3,
		"resolute_proxy_bytes_total{direction=to_task}":                                                   100,
		"resolute_proxy_bytes_total{direction=from_task}":                                                 2000,
		"resolute_http_requests_total{code=200,method=GET,route=/api/v1/trials/{id}}":                     2,
		"resolute_http_requests_total{code=404,method=other,route=unmatched}":                             1,
		"resolute_http_request_duration_seconds{method=GET,route=/api/v1/trials/{id}}":                    2,
		"resolute_scheduler_cycle_seconds":                                                                1,
		"resolute_scheduler_queue_length{pool=gpu}":                                                       4,
		"resolute_scheduler_queue_length{pool=cpu}":                                                       0,
		"resolute_allocations{pool=gpu,state=running}":                                                    1,
		"resolute_allocations{pool=gpu,state=preempting}":                                                 1,
		"resolute_allocations{pool=gpu,state=pending}":                                                    4,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if strings.Contains(k, "gpu=1,") {
			t.Errorf("a GPU not yet sampled has a series: %s", k)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no Go runtime series")
	}
}

func TestADatabaseThatDoesNotAnswerShowsAsDown(t *testing.T) {
	for name, tc := range map[string]struct {
		down            string
		ping            error
		wantUp, wantErr float64
	}{
		"the database answers":                     {wantUp: 1},
		"the ping fails":                           {ping: errors.New("timeout"), wantUp: 0, wantErr: 1},
		"the embedded database is being restarted": {down: "exited: signal 9", wantUp: 0},
	} {
		t.Run(name, func(t *testing.T) {
			src := fakeSources(tc.ping)
			src.DatabaseDown = func() string { return tc.down }
			m := New()
			m.Read(src)
			got := gather(t, m)
			if got["resolute_database_up"] != tc.wantUp {
				t.Errorf("resolute_database_up = %v, want %v", got["resolute_database_up"], tc.wantUp)
			}
			if got["resolute_scrape_errors{part=trial_system_metrics}"] != tc.wantErr {
				t.Errorf("scrape errors = %v, want %v", got["resolute_scrape_errors{part=trial_system_metrics}"], tc.wantErr)
			}
		})
	}
}

// TestTheDashboardShowsOnlySeriesTheMasterServes reads the Grafana
// dashboard of docs/ and checks every resolute_* series its queries name
// is one the master registers.
func TestTheDashboardShowsOnlySeriesTheMasterServes(t *testing.T) {
	data, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	m := New()
	m.Read(fakeSources(nil))
	m.ObserveRequest("GET", "/", 200, time.Millisecond)
	m.ObserveCycle(time.Millisecond, map[string]PoolCounts{"default": {}})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, f := range fams {
		served[f.GetName()] = true
	}
	name := regexp.MustCompile(`\b(resolute|go|process)_[a-z_]+`)
	var named []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				named = append(named, base)
				if !served[base] {
					t.Errorf("panel %q queries %s, which the master does not serve", p.Title, n)
				}
			}
		}
	}
	if len(named) < 15 {
		t.Errorf("the dashboard names only %d series: %v", len(named), named)
	}
}
