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

	// An experiment's series read from its reports (a zoomed chart's range,
	// or a whole series): every trial that reported the metric is listed
	// (from metric_series, and the reports not merged yet), even with no
	// points in the range (a row without a step).
	experimentSeriesSQL = `WITH s AS (
	  SELECT m.id, m.trial_id, m.steps_completed, metric_series_float(m.metrics->'avg_metrics'->$3::text) AS v, m.reported_at AS at,
	    COALESCE(metric_series_float(m.metrics->'avg_metrics'->'epochs'), metric_series_float(m.metrics->'avg_metrics'->'epoch')) AS ep,
	    row_number() OVER (PARTITION BY m.trial_id ORDER BY m.steps_completed, m.id) - 1 AS i,
	    count(*) OVER (PARTITION BY m.trial_id) AS n
	  FROM trials t JOIN metrics m ON m.trial_id = t.id
	  WHERE t.experiment_id = $1 AND m.group_name = $2 AND NOT m.hidden AND metric_series_float(m.metrics->'avg_metrics'->$3::text) IS NOT NULL
	    AND m.steps_completed >= $4 AND ($5::bigint < 0 OR m.steps_completed <= $5::bigint) AND m.steps_completed > $6::bigint)` + seriesKept + `
	SELECT k.trial_id, k.steps_completed, k.v, k.at, k.ep FROM kept k
	UNION ALL SELECT h.trial_id, NULL::bigint, NULL::float8, NULL::timestamptz, NULL::float8
	FROM metric_series h JOIN trials t ON t.id = h.trial_id
	WHERE t.experiment_id = $1 AND h.group_name = $2 AND h.metric = $3::text
	UNION ALL SELECT DISTINCT m.trial_id, NULL::bigint, NULL::float8, NULL::timestamptz, NULL::float8
	FROM metrics m JOIN trials t ON t.id = m.trial_id
	WHERE m.id > (SELECT through FROM metric_series_merged) AND t.experiment_id = $1 AND m.group_name = $2 AND NOT m.hidden
	  AND metric_series_float(m.metrics->'avg_metrics'->$3::text) IS NOT NULL
	ORDER BY 1, 2 NULLS FIRST`

	// An experiment's series from the points metric_series keeps of them
	// (see migration 00021): a few dozen rows a trial (the coarse ones) or
	// a few hundred, however many reports there are; past step $4. The
	// reports the merger has not reached yet (migration 00034: those of the
	// last moments) are read whole beside them, found by their ids.
	experimentKeptSQL = `SELECT u.trial_id, u.step, u.value, u.reported_at, u.epoch FROM (
	  SELECT h.trial_id, p.step, p.value, p.reported_at, p.epoch, p.report_id
	  FROM trials t JOIN metric_series h ON h.trial_id = t.id AND h.group_name = $2 AND h.metric = $3
	  LEFT JOIN metric_points p ON p.trial_id = h.trial_id AND p.group_name = h.group_name AND p.metric = h.metric AND p.step > $4`
	experimentKeptRest = `
	  WHERE t.experiment_id = $1
	  UNION ALL
	  SELECT m.trial_id, m.steps_completed, metric_series_float(m.metrics->'avg_metrics'->$3::text), m.reported_at,
	    COALESCE(metric_series_float(m.metrics->'avg_metrics'->'epochs'), metric_series_float(m.metrics->'avg_metrics'->'epoch')), m.id
	  FROM metrics m JOIN trials t ON t.id = m.trial_id
	  WHERE m.id > (SELECT through FROM metric_series_merged) AND t.experiment_id = $1 AND m.group_name = $2 AND NOT m.hidden
	    AND m.steps_completed > $4 AND metric_series_float(m.metrics->'avg_metrics'->$3::text) IS NOT NULL
	  UNION ALL
	  SELECT DISTINCT m.trial_id, NULL::bigint, NULL::float8, NULL::timestamptz, NULL::float8, NULL::bigint
	  FROM metrics m JOIN trials t ON t.id = m.trial_id
	  WHERE m.id > (SELECT through FROM metric_series_merged) AND t.experiment_id = $1 AND m.group_name = $2 AND NOT m.hidden
	    AND metric_series_float(m.metrics->'avg_metrics'->$3::text) IS NOT NULL) u
	ORDER BY u.trial_id, u.step NULLS FIRST, u.report_id`
	experimentFineSQL   = experimentKeptSQL + experimentKeptRest
	experimentCoarseSQL = experimentKeptSQL + ` AND p.coarse` + experimentKeptRest
)

// A series keeps at most about 3 points of each of its 128 buckets and
// coarse ones of 16 (migration 00021); a chart that asks for no more than
// coarsePoints a trial (one of 300 trials or more) gets the coarse ones.
const coarsePoints = 100

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
// reported it as a number, as s picks it, in trial and step order. A
// downsampled series comes from the points metric_series keeps (it never
// reads the reports), downsampled further to s.MaxPoints; a zoomed range
// or a whole series is read from the reports.
func (db *DB) ExperimentSeries(ctx context.Context, experimentID int64, s Series) ([]resolute.TrialSeries, error) {
	if s.MaxPoints < 4 || s.MinSteps > 0 || s.MaxSteps >= 0 {
		return db.experimentSeries(ctx, experimentID, 0, experimentSeriesSQL, s.args(experimentID)...)
	}
	sql := experimentFineSQL
	if s.MaxPoints <= coarsePoints {
		sql = experimentCoarseSQL
	}
	return db.experimentSeries(ctx, experimentID, s.MaxPoints, sql, experimentID, s.Group, s.Metric, s.AfterStep)
}

// experimentSeries reads rows of trial, step, value, time and epoch (a
// trial without points has one with a NULL step), each trial's points
// downsampled to maxPoints (0 for all).
func (db *DB) experimentSeries(ctx context.Context, experimentID int64, maxPoints int, sql string, args ...any) ([]resolute.TrialSeries, error) {
	rows, err := db.pool.Query(ctx, sql, args...)
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
	if maxPoints > 0 {
		for i := range out {
			out[i].Points = Downsample(out[i].Points, maxPoints)
		}
	}
	return out, nil
}

// Downsample is points (in step order) cut, as the SQL of Series does,
// into maxPoints/2 buckets of as many points each, keeping each bucket's
// smallest and largest value (the earliest of equal ones) and the first
// and last point. Fewer than maxPoints, or a maxPoints below 4, are kept
// whole. It reuses the slice.
func Downsample(points []resolute.MetricPoint, maxPoints int) []resolute.MetricPoint {
	n := len(points)
	if maxPoints < 4 || n <= maxPoints {
		return points
	}
	buckets := maxPoints / 2
	keep := make([]bool, n)
	keep[0], keep[n-1] = true, true
	lo, hi, bucket := 0, 0, 0
	for i := range n {
		if b := i * buckets / n; b != bucket {
			keep[lo], keep[hi] = true, true
			lo, hi, bucket = i, i, b
		}
		if points[i].Value < points[lo].Value {
			lo = i
		}
		if points[i].Value > points[hi].Value {
			hi = i
		}
	}
	keep[lo], keep[hi] = true, true
	out := points[:0]
	for i, p := range points {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}
