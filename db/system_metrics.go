package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// InsertSystemMetrics stores system metric reports and returns how many
// were new: one already stored (a retried POST) is dropped.
func (q *Queries) InsertSystemMetrics(ctx context.Context, reports []resolute.SystemMetricsReport) (int64, error) {
	var stored int64
	for _, r := range reports {
		n, err := q.q.InsertSystemMetrics(ctx, gen.InsertSystemMetricsParams{TrialID: r.TrialID, TrialRunID: int32(r.TrialRunID),
			GroupName: r.Group, AgentID: r.AgentID, ReportedAt: r.ReportedAt, Metrics: r.Metrics})
		if err != nil {
			return stored, translate(err, "system metrics of trial %d", r.TrialID)
		}
		stored += n
	}
	return stored, nil
}

// TrialSystemMetrics returns a trial's system metric reports of one group,
// of every run, in time order.
func (q *Queries) TrialSystemMetrics(ctx context.Context, trialID int64, group string) ([]resolute.SystemMetricsReport, error) {
	rows, err := q.q.ListTrialSystemMetrics(ctx, gen.ListTrialSystemMetricsParams{TrialID: trialID, GroupName: group})
	if err != nil {
		return nil, translate(err, "system metrics of trial %d", trialID)
	}
	out := make([]resolute.SystemMetricsReport, len(rows))
	for i, r := range rows {
		out[i] = resolute.SystemMetricsReport{TrialID: r.TrialID, TrialRunID: int(r.TrialRunID), Group: r.GroupName,
			AgentID: r.AgentID, ReportedAt: r.ReportedAt, Metrics: r.Metrics}
	}
	return out, nil
}

// TrialSystemMetricGroups returns the groups of system metrics a trial
// reported, sorted.
func (q *Queries) TrialSystemMetricGroups(ctx context.Context, trialID int64) ([]string, error) {
	groups, err := q.q.ListTrialSystemMetricGroups(ctx, trialID)
	return groups, translate(err, "system metric groups of trial %d", trialID)
}

// RunningTrialSystemMetrics returns the latest report of each group and
// agent of every trial running now (of its current run, and of the last
// ten minutes).
func (q *Queries) RunningTrialSystemMetrics(ctx context.Context) ([]resolute.SystemMetricsReport, error) {
	rows, err := q.q.ListRunningTrialSystemMetrics(ctx)
	if err != nil {
		return nil, translate(err, "system metrics of running trials")
	}
	out := make([]resolute.SystemMetricsReport, len(rows))
	for i, r := range rows {
		out[i] = resolute.SystemMetricsReport{TrialID: r.TrialID, TrialRunID: int(r.TrialRunID), Group: r.GroupName,
			AgentID: r.AgentID, ReportedAt: r.ReportedAt, Metrics: r.Metrics}
	}
	return out, nil
}
