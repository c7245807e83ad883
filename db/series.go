package db

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
)

// Series picks the part of a metric series a chart asks for. The
// statements are written here rather than generated, as a trial's series is
// streamed row by row instead of collected.
type Series struct {
	Group string
	// Metric is the value downsampling keeps the extremes of; reports
	// without it as a number keep their bucket's first.
	Metric string
	// MaxPoints downsamples to about that many points (see below); 0
	// keeps every report.
	MaxPoints int
	MinSteps  int64 // reports from this step on
	MaxSteps  int64 // and up to this step; -1 for no bound
	AfterStep int64 // and past this step (a chart's last point); -1 for none
}

// Downsampling, in SQL over the light columns before the reports are read:
// the reports (in step order, within the range) are cut into MaxPoints/2
// buckets, and each keeps its reports with the smallest and the largest
// value of the metric (so spikes survive), or its first when none has the
// metric as a number, plus the series' first and last report. A series
// that fits (or a MaxPoints below 4) is kept whole. $1 is the series' key
// (trial or experiment), then group, metric, min, max, after, max points.
const (
	seriesRows = `
	SELECT m.id, m.trial_id, m.steps_completed,
	  CASE WHEN jsonb_typeof(m.metrics->'avg_metrics'->$3::text) = 'number' THEN (m.metrics->'avg_metrics'->>$3::text)::float8 END AS v,
	  NULL::timestamptz AS at, NULL::float8 AS ep,
	  row_number() OVER (PARTITION BY m.trial_id ORDER BY m.steps_completed, m.id) - 1 AS i,
	  count(*) OVER (PARTITION BY m.trial_id) AS n
	FROM metrics m`
	seriesRange = ` AND m.group_name = $2 AND NOT m.hidden AND m.steps_completed >= $4
	  AND ($5::bigint < 0 OR m.steps_completed <= $5::bigint) AND m.steps_completed > $6::bigint`
	// the range with the parameters numbered for trialReportsSQL
	reportsRange = ` AND m.group_name = $2 AND NOT m.hidden AND m.steps_completed >= $3
	  AND ($4::bigint < 0 OR m.steps_completed <= $4::bigint) AND m.steps_completed > $5::bigint`
	seriesKept = `
	, b AS (SELECT s.*, CASE WHEN $7::int >= 4 AND s.n > $7::int THEN s.i * ($7::int / 2) / s.n ELSE s.i END AS bucket FROM s)
	, r AS (SELECT b.*,
	    row_number() OVER (PARTITION BY b.trial_id, b.bucket ORDER BY b.v ASC NULLS LAST, b.i) AS lo,
	    row_number() OVER (PARTITION BY b.trial_id, b.bucket ORDER BY b.v DESC NULLS LAST, b.i) AS hi,
	    count(b.v) OVER (PARTITION BY b.trial_id, b.bucket) AS valued,
	    min(b.i) OVER (PARTITION BY b.trial_id, b.bucket) AS first
	  FROM b)
	, kept AS (SELECT r.id, r.trial_id, r.steps_completed, r.v, r.at, r.ep, r.i FROM r
	  WHERE $7::int < 4 OR r.n <= $7::int OR r.i = 0 OR r.i = r.n - 1
	    OR (r.v IS NOT NULL AND (r.lo = 1 OR r.hi = 1)) OR (r.valued = 0 AND r.i = r.first))`

	trialSeriesSQL = `WITH s AS (` + seriesRows + ` WHERE m.trial_id = $1` + seriesRange + `)` + seriesKept + `
	SELECT m.trial_id, m.trial_run_id, m.steps_completed, m.group_name, m.metrics, m.reported_at
	FROM kept k JOIN metrics m ON m.id = k.id ORDER BY k.i`

	trialReportsSQL = `SELECT m.trial_id, m.trial_run_id, m.steps_completed, m.group_name, m.metrics, m.reported_at
	FROM metrics m WHERE m.trial_id = $1` + reportsRange + `
	ORDER BY m.steps_completed, m.id`

	// An experiment's series: every trial that reported the metric is
	// listed, even with no points in the range (a row without a step).
	experimentSeriesSQL = `WITH a AS (
	  SELECT m.id, m.trial_id, m.steps_completed, (m.metrics->'avg_metrics'->>$3::text)::float8 AS v, m.reported_at AS at,
	    COALESCE(CASE WHEN jsonb_typeof(m.metrics->'avg_metrics'->'epochs') = 'number' THEN (m.metrics->'avg_metrics'->>'epochs')::float8 END,
	      CASE WHEN jsonb_typeof(m.metrics->'avg_metrics'->'epoch') = 'number' THEN (m.metrics->'avg_metrics'->>'epoch')::float8 END) AS ep,
	    m.steps_completed >= $4 AND ($5::bigint < 0 OR m.steps_completed <= $5::bigint) AND m.steps_completed > $6::bigint AS wanted
	  FROM metrics m JOIN trials t ON t.id = m.trial_id
	  WHERE t.experiment_id = $1 AND m.group_name = $2 AND NOT m.hidden AND jsonb_typeof(m.metrics->'avg_metrics'->$3::text) = 'number')
	, s AS (SELECT a.id, a.trial_id, a.steps_completed, a.v, a.at, a.ep,
	    row_number() OVER (PARTITION BY a.trial_id ORDER BY a.steps_completed, a.id) - 1 AS i,
	    count(*) OVER (PARTITION BY a.trial_id) AS n
	  FROM a WHERE a.wanted)` + seriesKept + `
	SELECT k.trial_id, k.steps_completed, k.v, k.at, k.ep FROM kept k
	UNION ALL SELECT DISTINCT a.trial_id, NULL::bigint, NULL::float8, NULL::timestamptz, NULL::float8 FROM a
	ORDER BY 1, 2 NULLS FIRST`
)

func (s Series) args(key int64) []any {
	return []any{key, s.Group, s.Metric, s.MinSteps, s.MaxSteps, s.AfterStep, s.MaxPoints}
}

// EachTrialMetric calls fn with each report of a trial's series that s
// picks, in step order, as it reads them: a long series is never held
// whole. It stops at fn's first error and returns it.
func (db *DB) EachTrialMetric(ctx context.Context, trialID int64, s Series, fn func(resolute.MetricsReport) error) error {
	sql, args := trialReportsSQL, []any{trialID, s.Group, s.MinSteps, s.MaxSteps, s.AfterStep}
	if s.MaxPoints >= 4 {
		sql, args = trialSeriesSQL, s.args(trialID)
	}
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return translate(err, "metrics of trial %d", trialID)
	}
	defer rows.Close()
	var r resolute.MetricsReport
	var metrics []byte
	var runID int32
	_, err = pgx.ForEachRow(rows, []any{&r.TrialID, &runID, &r.StepsCompleted, &r.Group, &metrics, &r.ReportedAt}, func() error {
		r.TrialRunID, r.Metrics = int(runID), json.RawMessage(metrics)
		return fn(r)
	})
	return translate(err, "metrics of trial %d", trialID)
}

// ExperimentSeries returns one metric of every trial of an experiment that
// reported it as a number, as s picks it, in trial and step order.
func (db *DB) ExperimentSeries(ctx context.Context, experimentID int64, s Series) ([]resolute.TrialSeries, error) {
	rows, err := db.pool.Query(ctx, experimentSeriesSQL, s.args(experimentID)...)
	if err != nil {
		return nil, translate(err, "metrics of experiment %d", experimentID)
	}
	out := []resolute.TrialSeries{}
	var trialID int64
	var step *int64
	var value, epoch *float64
	var at *time.Time
	_, err = pgx.ForEachRow(rows, []any{&trialID, &step, &value, &at, &epoch}, func() error {
		if len(out) == 0 || out[len(out)-1].TrialID != trialID {
			out = append(out, resolute.TrialSeries{TrialID: trialID})
		}
		if step != nil {
			out[len(out)-1].Points = append(out[len(out)-1].Points, resolute.MetricPoint{StepsCompleted: *step, Value: *value, ReportedAt: *at, Epoch: epoch})
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "metrics of experiment %d", experimentID)
	}
	return out, nil
}
