package resolute

import (
	"encoding/json"
	"slices"
	"time"
)

// SystemMetricGroups are the metric groups a trial's profiler reports
// (core_context.profiler, Determined's names): the machine's, sampled in
// time rather than per batch, and stored apart from training and
// validation metrics.
var SystemMetricGroups = []string{"cpu", "memory", "disk", "network", "gpu"}

// IsSystemMetricGroup says whether group is one of SystemMetricGroups.
func IsSystemMetricGroup(group string) bool { return slices.Contains(SystemMetricGroups, group) }

// SystemMetricsReport is one agent's averages of one group of system
// metrics, e.g. {"cpu_util_simple": 12.5} or, per GPU,
// {"GPU-1f…": {"gpu_util": 87, "gpu_free_memory": 1.2e9}}.
type SystemMetricsReport struct {
	TrialID    int64
	TrialRunID int
	Group      string
	AgentID    string
	ReportedAt time.Time
	Metrics    json.RawMessage
}

// AsMetricsReport is r as the metrics API serves it: the body Determined's
// profiler posts, its metrics keyed by agent under avg_metrics.
func (r SystemMetricsReport) AsMetricsReport() MetricsReport {
	m, _ := json.Marshal(map[string]map[string]json.RawMessage{"avg_metrics": {r.AgentID: r.Metrics}})
	return MetricsReport{TrialID: r.TrialID, TrialRunID: r.TrialRunID, Group: r.Group, Metrics: m, ReportedAt: r.ReportedAt}
}
