package db

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
)

// MetricsScope picks the reports a metrics download holds: every trial of
// an experiment, or one trial.
type MetricsScope struct {
	ExperimentID int64 // when not 0, every trial of it
	TrialID      int64 // else this trial
}

// The reports of a scope that count (not hidden by a restart), in trial,
// group and step order; $1 is the experiment (0 for none), $2 the trial.
// Written here rather than generated because the reports are streamed.
const (
	scopeReports = `
	FROM metrics m
	WHERE NOT m.hidden
	  AND (($1::bigint <> 0 AND m.trial_id IN (SELECT t.id FROM trials t WHERE t.experiment_id = $1::bigint))
	    OR ($1::bigint = 0 AND m.trial_id = $2::bigint))`
	scopeMetricNamesSQL = `SELECT DISTINCT k FROM (SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(m.metrics->'avg_metrics') = 'object'
	  THEN m.metrics->'avg_metrics' ELSE '{}'::jsonb END) AS k` + scopeReports + `) names ORDER BY k`
	scopeReportsSQL = `SELECT m.trial_id, m.trial_run_id, m.steps_completed, m.group_name, m.metrics->'avg_metrics', m.reported_at` +
		scopeReports + ` ORDER BY m.trial_id, m.group_name, m.steps_completed, m.id`
)

func (s MetricsScope) args() []any { return []any{s.ExperimentID, s.TrialID} }

// MetricNames are the names of every metric the scope's reports hold, in
// any group, sorted.
func (db *DB) MetricNames(ctx context.Context, s MetricsScope) ([]string, error) {
	rows, err := db.pool.Query(ctx, scopeMetricNamesSQL, s.args()...)
	if err != nil {
		return nil, translate(err, "metric names")
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, translate(err, "metric names")
}

// EachMetricsReport calls fn with each report of the scope, in trial, group
// and step order, as it reads them (Metrics is the report's avg_metrics).
// It stops at fn's first error and returns it.
func (db *DB) EachMetricsReport(ctx context.Context, s MetricsScope, fn func(resolute.MetricsReport) error) error {
	rows, err := db.pool.Query(ctx, scopeReportsSQL, s.args()...)
	if err != nil {
		return translate(err, "metrics")
	}
	defer rows.Close()
	var r resolute.MetricsReport
	var metrics []byte
	var runID int32
	_, err = pgx.ForEachRow(rows, []any{&r.TrialID, &runID, &r.StepsCompleted, &r.Group, &metrics, &r.ReportedAt}, func() error {
		r.TrialRunID, r.Metrics = int(runID), json.RawMessage(metrics)
		return fn(r)
	})
	return translate(err, "metrics")
}
