package monitoring

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resolute-ml/resolute"
)

// The series read at scrape time.
var (
	slotsDesc = prometheus.NewDesc("resolute_slots",
		"Slots of each resource pool (GPUs, or CPU slots).", []string{"pool", "slot_type"}, nil)
	slotsUsedDesc = prometheus.NewDesc("resolute_slots_used",
		"Slots of each resource pool held by an allocation (or, on Kubernetes, by a pod Resolute did not start).", []string{"pool", "slot_type"}, nil)
	dbUpDesc = prometheus.NewDesc("resolute_database_up",
		"1 when the database answers a ping, 0 when it does not (or the embedded database is being restarted).", nil, nil)
	dbConnsDesc = prometheus.NewDesc("resolute_database_connections",
		"The master's database connections, by state (acquired, idle, total, max).", []string{"state"}, nil)
	gpuUtilDesc = prometheus.NewDesc("resolute_gpu_utilization_percent",
		"A GPU's utilization as NVML last read it (local resource manager).", []string{"agent", "gpu", "uuid"}, nil)
	gpuMemUsedDesc = prometheus.NewDesc("resolute_gpu_memory_used_bytes",
		"A GPU's memory in use as NVML last read it (local resource manager).", []string{"agent", "gpu", "uuid"}, nil)
	gpuMemTotalDesc = prometheus.NewDesc("resolute_gpu_memory_total_bytes",
		"A GPU's memory as NVML last read it (local resource manager).", []string{"agent", "gpu", "uuid"}, nil)
	trialSystemDesc = prometheus.NewDesc("resolute_trial_system_metric",
		"The latest system metric of a running trial's profiler (profiling.enabled or core_context.profiler): "+
			"group cpu, memory, disk, network or gpu; gpu is the GPU's UUID for per-GPU metrics, else empty.",
		[]string{"trial_id", "group", "agent", "gpu", "metric"}, nil)
	scrapeErrorsDesc = prometheus.NewDesc("resolute_scrape_errors",
		"1 when a part of this scrape could not be read (the database did not answer in time), by part.", []string{"part"}, nil)
)

// stateCollector reads Sources at scrape time.
type stateCollector struct {
	src    Sources
	budget time.Duration // for the database's parts of one scrape
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{slotsDesc, slotsUsedDesc, dbUpDesc, dbConnsDesc, gpuUtilDesc,
		gpuMemUsedDesc, gpuMemTotalDesc, trialSystemDesc, scrapeErrorsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.budget)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if c.src.Pools != nil {
		for _, p := range c.src.Pools() {
			gauge(slotsDesc, float64(len(p.Slots)), p.Name, p.SlotType)
			gauge(slotsUsedDesc, float64(p.SlotsUsed), p.Name, p.SlotType)
		}
	}
	if c.src.Agents != nil {
		for _, a := range c.src.Agents() {
			for _, s := range a.Slots {
				if s.Usage == nil {
					continue
				}
				gpu := strconv.Itoa(s.ID)
				gauge(gpuUtilDesc, s.Usage.UtilizationPercent, a.ID, gpu, s.Usage.UUID)
				gauge(gpuMemUsedDesc, float64(s.Usage.MemoryUsedBytes), a.ID, gpu, s.Usage.UUID)
				gauge(gpuMemTotalDesc, float64(s.Usage.MemoryTotalBytes), a.ID, gpu, s.Usage.UUID)
			}
		}
	}
	if c.src.Ping != nil {
		up := 1.0
		if c.src.DatabaseDown != nil && c.src.DatabaseDown() != "" {
			up = 0
		} else if err := c.src.Ping(ctx); err != nil {
			up = 0
		}
		gauge(dbUpDesc, up)
	}
	if c.src.DatabaseConns != nil {
		acquired, idle, total, max := c.src.DatabaseConns()
		gauge(dbConnsDesc, float64(acquired), "acquired")
		gauge(dbConnsDesc, float64(idle), "idle")
		gauge(dbConnsDesc, float64(total), "total")
		gauge(dbConnsDesc, float64(max), "max")
	}
	if c.src.TrialSystemMetrics != nil {
		reports, err := c.src.TrialSystemMetrics(ctx)
		failed := 0.0
		if err != nil {
			failed = 1
		}
		gauge(scrapeErrorsDesc, failed, "trial_system_metrics")
		for _, r := range reports {
			for _, s := range systemSamples(r) {
				gauge(trialSystemDesc, s.value, strconv.FormatInt(r.TrialID, 10), r.Group, r.AgentID, s.gpu, s.metric)
			}
		}
	}
}

// systemSample is one number of a system metrics report.
type systemSample struct {
	gpu, metric string
	value       float64
}

// systemSamples flattens a report's metrics, {name: number} or, per GPU,
// {uuid: {name: number}}, skipping anything else.
func systemSamples(r resolute.SystemMetricsReport) []systemSample {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Metrics, &m) != nil {
		return nil
	}
	var out []systemSample
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var v float64
		if json.Unmarshal(m[k], &v) == nil {
			out = append(out, systemSample{metric: k, value: v})
			continue
		}
		var nested map[string]float64
		if json.Unmarshal(m[k], &nested) == nil {
			for _, name := range slices.Sorted(maps.Keys(nested)) {
				out = append(out, systemSample{gpu: k, metric: name, value: nested[name]})
			}
		}
	}
	return out
}
