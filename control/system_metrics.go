package control

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Bounds on one system metrics report: a machine has a handful of GPUs and
// mounts, so anything far larger is not a profiler's.
const (
	maxSystemAgents  = 64
	maxSystemMetrics = 256
)

// ReportSystemMetrics stores a trial's report of one group of system
// metrics (resolute.SystemMetricGroups), whose avg maps each agent id to
// that machine's averages: only the trial's own allocation may. A run id
// of 0 is the trial's current run; a report at a time already stored is
// kept once.
func (s *Trials) ReportSystemMetrics(ctx context.Context, a authz.Actor, trialID int64, runID int, group string, at time.Time, avg map[string]any) error {
	if !resolute.IsSystemMetricGroup(group) {
		return resolute.Errorf(resolute.EInvalid, "group: %q is not a system metrics group", group)
	}
	samples, err := systemSamples(avg)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(q *db.Queries) error {
		t, err := trialFor(ctx, q, a, authz.Report, trialID)
		if err != nil {
			return err
		}
		switch runID {
		case 0:
			runID = t.RunID
		case t.RunID:
		default:
			return resolute.Errorf(resolute.EInvalid, "trial_run_id: trial %d is on run %d, not %d", t.ID, t.RunID, runID)
		}
		reports := make([]resolute.SystemMetricsReport, 0, len(samples))
		for _, agent := range slices.Sorted(maps.Keys(samples)) {
			reports = append(reports, resolute.SystemMetricsReport{TrialID: t.ID, TrialRunID: runID, Group: group,
				AgentID: agent, ReportedAt: at, Metrics: samples[agent]})
		}
		_, err = q.InsertSystemMetrics(ctx, reports)
		return err
	})
}

// systemSamples checks a report's avg_metrics as Determined's profiler
// sends them, {agent: {name: number | {name: number}}} (the nested level is
// a GPU's or a mount's), and returns each agent's metrics as JSON.
func systemSamples(avg map[string]any) (map[string]json.RawMessage, error) {
	if len(avg) == 0 {
		return nil, resolute.Errorf(resolute.EInvalid, "metrics.metrics.avg_metrics: expected the metrics of at least one agent")
	}
	if len(avg) > maxSystemAgents {
		return nil, resolute.Errorf(resolute.EInvalid, "metrics.metrics.avg_metrics: at most %d agents", maxSystemAgents)
	}
	out := make(map[string]json.RawMessage, len(avg))
	for agent, v := range avg {
		path := "metrics.metrics.avg_metrics." + agent
		m, ok := v.(map[string]any)
		if agent == "" || !ok {
			return nil, resolute.Errorf(resolute.EInvalid, "%s: expected an agent id and its metrics as an object", path)
		}
		if err := checkSystemLevel(path, m, true); err != nil {
			return nil, err
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode system metrics: %w", err)
		}
		out[agent] = b
	}
	return out, nil
}

// checkSystemLevel checks one level of an agent's metrics: finite numbers,
// and at the top level also objects of them.
func checkSystemLevel(path string, m map[string]any, top bool) error {
	if len(m) > maxSystemMetrics {
		return resolute.Errorf(resolute.EInvalid, "%s: at most %d metrics", path, maxSystemMetrics)
	}
	for k, v := range m {
		switch v := v.(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return resolute.Errorf(resolute.EInvalid, "%s.%s: expected a finite number", path, k)
			}
		case map[string]any:
			if !top {
				return resolute.Errorf(resolute.EInvalid, "%s.%s: expected a number", path, k)
			}
			if err := checkSystemLevel(path+"."+k, v, false); err != nil {
				return err
			}
		default:
			return resolute.Errorf(resolute.EInvalid, "%s.%s: expected a number", path, k)
		}
	}
	return nil
}
