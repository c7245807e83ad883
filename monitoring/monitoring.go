package monitoring

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/resolute-ml/resolute"
)

// Sources are what the master reads at scrape time; a nil func leaves its
// series out.
type Sources struct {
	// Pools gives the resource pools with their slots (control's
	// Queue.ResourcePools): resolute_slots and resolute_slots_used.
	Pools func() []resolute.ResourcePool
	// Agents gives the machines and their slots, whose GPU usage becomes
	// resolute_gpu_*.
	Agents func() []resolute.Agent
	// Ping asks the database to answer: resolute_database_up.
	Ping func(ctx context.Context) error
	// DatabaseDown, with the embedded database, says why it is down while
	// its supervisor restarts it, "" while it runs.
	DatabaseDown func() string
	// DatabaseConns gives the connection pool's acquired, idle and total
	// connections and its maximum.
	DatabaseConns func() (acquired, idle, total, max int32)
	// TrialSystemMetrics gives the latest report of each group and agent of
	// every running trial's profiler: resolute_trial_system_metric.
	TrialSystemMetrics func(ctx context.Context) ([]resolute.SystemMetricsReport, error)
	// MetricReports counts the metric reports stored since the master
	// started: resolute_metric_reports_total.
	MetricReports func() uint64
	// SSEClients counts the event streams (GET /events and the others) open
	// now: resolute_sse_clients.
	SSEClients func() int
	// ProxyBytes counts the bytes the task proxy carried to and from tasks.
	ProxyBytes func() (toTasks, fromTasks uint64)
}

// Metrics is the master's registry and the series it is told about.
// Its methods are safe for concurrent use.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	durations    *prometheus.HistogramVec
	cycle        prometheus.Histogram
	queued       *prometheus.GaugeVec
	allocations  *prometheus.GaugeVec
	scrapeBudget time.Duration
}

// New returns the master's metrics with the Go runtime's and the process's
// series and those it is told about; Read adds those read at scrape time.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "resolute_http_requests_total",
			Help: "HTTP requests to the master, by method, route pattern (\"unmatched\" for none) and status code.",
		}, []string{"method", "route", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "resolute_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests to the master, by method and route pattern (streams count until they end).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route"}),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "resolute_scheduler_cycle_seconds",
			Help:    "Time an admission cycle takes: snapshot, scheduler decision and launches.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "resolute_scheduler_queue_length",
			Help: "Allocations waiting for slots at the latest admission cycle, by resource pool.",
		}, []string{"pool"}),
		allocations: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "resolute_allocations",
			Help: "Allocations not yet ended at the latest admission cycle, by resource pool and state (pending, running, preempting).",
		}, []string{"pool", "state"}),
		scrapeBudget: 5 * time.Second,
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.durations, m.cycle, m.queued, m.allocations,
	)
	return m
}

// Read adds the series read from src at scrape time; call it once, when
// what src reads exists.
func (m *Metrics) Read(src Sources) {
	m.reg.MustRegister(&stateCollector{src: src, budget: m.scrapeBudget})
	if src.MetricReports != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "resolute_metric_reports_total",
			Help: "Training and validation metric reports stored since the master started; rate() is the ingestion rate.",
		}, func() float64 { return float64(src.MetricReports()) }))
	}
	if src.SSEClients != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "resolute_sse_clients",
			Help: "Server-sent event streams open now (live pages and the job queue).",
		}, func() float64 { return float64(src.SSEClients()) }))
	}
	if src.ProxyBytes != nil {
		for _, dir := range []string{"to_task", "from_task"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "resolute_proxy_bytes_total",
				Help:        "Bytes the task proxy carried, by direction (to_task: requests and websocket frames from browsers; from_task: responses and frames back).",
				ConstLabels: prometheus.Labels{"direction": dir},
			}, func() float64 {
				to, from := src.ProxyBytes()
				if dir == "to_task" {
					return float64(to)
				}
				return float64(from)
			}))
		}
	}
}

// Handler serves the series in Prometheus's text (or OpenMetrics) format.
// It does not check who asks: handlers/prometheus.go does.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Timeout: 2 * m.scrapeBudget})
}

// Registry is the registry, for tests and for series of other packages.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest counts one HTTP request; route is chi's pattern, "" when
// no route matched (so that unknown paths cannot multiply the series).
func (m *Metrics) ObserveRequest(method, route string, code int, took time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	method = knownMethod(method)
	m.requests.WithLabelValues(method, route, strconv.Itoa(code)).Inc()
	m.durations.WithLabelValues(method, route).Observe(took.Seconds())
}

// knownMethod keeps the method label to the methods HTTP defines.
func knownMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// PoolCounts is what one admission cycle saw in one resource pool.
type PoolCounts struct {
	Pending, Running, Preempting int
}

// ObserveCycle records one admission cycle: how long it took and, per
// pool, its allocations that wait and run. Pools it does not name are
// set to zero.
func (m *Metrics) ObserveCycle(took time.Duration, pools map[string]PoolCounts) {
	if m == nil {
		return
	}
	m.cycle.Observe(took.Seconds())
	for pool, c := range pools {
		m.queued.WithLabelValues(pool).Set(float64(c.Pending))
		m.allocations.WithLabelValues(pool, "pending").Set(float64(c.Pending))
		m.allocations.WithLabelValues(pool, "running").Set(float64(c.Running))
		m.allocations.WithLabelValues(pool, "preempting").Set(float64(c.Preempting))
	}
}
