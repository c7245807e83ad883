package db

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
)

// TrialSorts are the fixed columns an experiment's trials table sorts by;
// it also sorts by hp.NAME (a hyperparameter, nested ones by their dotted
// path) and m.NAME (a metric of the trial's latest validation report).
var TrialSorts = []string{"id", "state", "best", "steps", "restarts", "checkpoints", "started", "ended", "duration"}

// TrialPageFilter selects a page of an experiment's trials table.
type TrialPageFilter struct {
	ExperimentID int64
	// IDs keeps only these trials (the ones brushed on the hyperparameters
	// tab); nil keeps every trial.
	IDs []int64
	// Sort is one of TrialSorts, hp.NAME or m.NAME; "" is id. Trials
	// without a value sort last either way, then by id.
	Sort       string
	Descending bool
	Now        time.Time // where a running trial's duration ends
	Limit      int
	Offset     int
}

// TrialPageRow is a trial of the table with its completed checkpoints.
type TrialPageRow struct {
	resolute.Trial
	Checkpoints int
}

// trialSortKeys are the SQL of the fixed sort columns over trials t and
// the statement's parameters p (now: the filter's Now; path: a
// hyperparameter's; metric: a metric's name).
var trialSortKeys = map[string]string{
	"id": "t.id", "state": "t.state", "best": "t.best_validation", "steps": "t.steps_completed",
	"restarts": "t.restarts", "started": "t.created_at", "ended": "t.ended_at",
	"duration":    "COALESCE(t.ended_at, p.now) - t.created_at",
	"checkpoints": "(SELECT count(*) FROM checkpoints c WHERE c.trial_id = t.id AND c.state = 'COMPLETED')",
}

// latestValidation is the value of metric p.metric in trial t's latest validation
// report that counts, NULL where it is not a number there.
const latestValidation = `(SELECT CASE WHEN jsonb_typeof(m.metrics->'avg_metrics'->p.metric) = 'number'
	  THEN (m.metrics->'avg_metrics'->>p.metric)::float8 END
	FROM metrics m WHERE m.trial_id = t.id AND m.group_name = 'validation' AND NOT m.hidden
	ORDER BY m.steps_completed DESC LIMIT 1)`

// TrialPage returns one page of an experiment's trials, sorted in SQL
// (so a page of 50 of 1,000 trials reads and sends 50), and how many
// trials the filter matches. An unknown sort is invalid.
//
// The statement is put together here from fixed pieces: the sort column is
// one of trialSortKeys' expressions or one with the hyperparameter's path
// or the metric's name as a parameter; nothing a request sends is spliced
// into its text.
func (db *DB) TrialPage(ctx context.Context, f TrialPageFilter) ([]TrialPageRow, int, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.Sort == "" {
		f.Sort = "id"
	}
	var path []string
	var metric string
	key, ok := trialSortKeys[f.Sort]
	switch {
	case ok:
	case strings.HasPrefix(f.Sort, "hp.") && len(f.Sort) > 3:
		key, path = "t.hparams #> p.path", strings.Split(strings.TrimPrefix(f.Sort, "hp."), ".")
	case strings.HasPrefix(f.Sort, "m.") && len(f.Sort) > 2:
		key, metric = latestValidation, strings.TrimPrefix(f.Sort, "m.")
	default:
		return nil, 0, resolute.Errorf(resolute.EInvalid, "sort: unknown column %q; sort by %s, hp.NAME of a hyperparameter or m.NAME of a validation metric",
			f.Sort, strings.Join(TrialSorts, ", "))
	}
	dir := "ASC"
	if f.Descending {
		dir = "DESC"
	}
	if f.Now.IsZero() {
		f.Now = time.Now()
	}
	// $2 is NULL for every trial: an empty array would keep none.
	var ids any
	if f.IDs != nil {
		ids = f.IDs
	}
	// The page's ids come first, in order (a sort of the experiment's
	// trials by one key, cut to the page, counting them all on the way);
	// only the page's rows are read whole, with their checkpoints counted.
	sql := `WITH page AS (
	  SELECT t.id, row_number() OVER (ORDER BY (` + key + `) IS NULL, ` + key + ` ` + dir + `, t.id) AS ord, count(*) OVER () AS total
	  FROM (SELECT $3::timestamptz AS now, $4::text[] AS path, $5::text AS metric) p, trials t
	  WHERE t.experiment_id = $1 AND ($2::bigint[] IS NULL OR t.id = ANY($2::bigint[]))
	  ORDER BY ord LIMIT $6 OFFSET $7)
	SELECT t.id, t.experiment_id, t.request_id, t.state, t.hparams, t.seed, t.run_id, t.restarts, t.steps_completed,
	  t.best_validation, t.latest_checkpoint, t.progress, t.early_exit, t.runner_state, t.created_at, t.ended_at,
	  (SELECT count(*) FROM checkpoints c WHERE c.trial_id = t.id AND c.state = 'COMPLETED'), page.total
	FROM page JOIN trials t ON t.id = page.id
	ORDER BY page.ord`
	var total int64
	rows, err := db.pool.Query(ctx, sql, f.ExperimentID, ids, f.Now, path, metric, f.Limit, f.Offset)
	if err != nil {
		return nil, 0, translate(err, "trials of experiment %d", f.ExperimentID)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (TrialPageRow, error) {
		var r TrialPageRow
		var hp []byte
		var cp, exit *string
		var n int64
		var req, run, restarts int32
		err := row.Scan(&r.ID, &r.ExperimentID, &req, &r.State, &hp, &r.Seed, &run, &restarts, &r.StepsCompleted,
			&r.BestValidation, &cp, &r.Progress, &exit, &r.RunnerState, &r.CreatedAt, &r.EndedAt, &n, &total)
		r.RequestID, r.RunID, r.Restarts, r.Hparams, r.Checkpoints = int(req), int(run), int(restarts), json.RawMessage(hp), int(n)
		if cp != nil {
			r.LatestCheckpoint = *cp
		}
		if exit != nil {
			r.EarlyExit = *exit
		}
		return r, err
	})
	if err == nil && len(out) == 0 { // past the last page: count them alone
		err = db.pool.QueryRow(ctx, `SELECT count(*) FROM trials t WHERE t.experiment_id = $1 AND ($2::bigint[] IS NULL OR t.id = ANY($2::bigint[]))`,
			f.ExperimentID, ids).Scan(&total)
	}
	if err != nil {
		return nil, 0, translate(err, "trials of experiment %d", f.ExperimentID)
	}
	return out, int(total), nil
}

// HparamValue is one value of a top-level hyperparameter and how many of
// an experiment's trials have it.
type HparamValue struct {
	Name   string
	Value  json.RawMessage
	Trials int
}

// TrialHparamValues returns the distinct values each top-level
// hyperparameter takes across an experiment's trials, with how many trials
// have each, and how many trials it has: what the trials table needs to
// name its columns and know which every trial shares, without reading
// each trial's.
func (db *DB) TrialHparamValues(ctx context.Context, experimentID int64) ([]HparamValue, int, error) {
	rows, err := db.pool.Query(ctx, `SELECT e.key, e.value, count(*), (SELECT count(*) FROM trials WHERE experiment_id = $1)
	FROM trials t CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(t.hparams) = 'object' THEN t.hparams ELSE '{}'::jsonb END) AS e(key, value)
	WHERE t.experiment_id = $1
	GROUP BY e.key, e.value ORDER BY e.key`, experimentID)
	if err != nil {
		return nil, 0, translate(err, "hyperparameters of experiment %d", experimentID)
	}
	var out []HparamValue
	var v HparamValue
	var raw []byte
	var n, total int64
	_, err = pgx.ForEachRow(rows, []any{&v.Name, &raw, &n, &total}, func() error {
		v.Value, v.Trials = json.RawMessage(slices.Clone(raw)), int(n)
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, 0, translate(err, "hyperparameters of experiment %d", experimentID)
	}
	if len(out) == 0 { // no trial has a hyperparameter: count them alone
		err = db.pool.QueryRow(ctx, `SELECT count(*) FROM trials WHERE experiment_id = $1`, experimentID).Scan(&total)
	}
	return out, int(total), translate(err, "trials of experiment %d", experimentID)
}

// LatestValidations returns each trial's latest validation report that
// counts (its avg_metrics), by trial: the trials table's metric columns.
// Trials that have none are absent.
func (db *DB) LatestValidations(ctx context.Context, trialIDs []int64) (map[int64]map[string]json.RawMessage, error) {
	rows, err := db.pool.Query(ctx, `SELECT t.id, l.m FROM unnest($1::bigint[]) AS t(id)
	CROSS JOIN LATERAL (SELECT m.metrics->'avg_metrics' AS m FROM metrics m
	  WHERE m.trial_id = t.id AND m.group_name = 'validation' AND NOT m.hidden
	  ORDER BY m.steps_completed DESC LIMIT 1) l`, trialIDs)
	if err != nil {
		return nil, translate(err, "latest validations")
	}
	out := map[int64]map[string]json.RawMessage{}
	var id int64
	var m []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &m}, func() error {
		var v map[string]json.RawMessage
		if json.Unmarshal(m, &v) == nil {
			out[id] = v
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "latest validations")
	}
	return out, nil
}

// LatestValidationNames returns the names of the numeric metrics in the
// latest validation reports of an experiment's newest 50 trials that have
// a best validation, sorted: the metric columns the trials table offers,
// the same on every page, for 50 index lookups rather than one per trial.
func (db *DB) LatestValidationNames(ctx context.Context, experimentID int64) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT k.name FROM (
	  SELECT id FROM trials WHERE experiment_id = $1 AND best_validation IS NOT NULL ORDER BY id DESC LIMIT 50) t
	CROSS JOIN LATERAL (SELECT m.metrics->'avg_metrics' AS m FROM metrics m
	  WHERE m.trial_id = t.id AND m.group_name = 'validation' AND NOT m.hidden
	  ORDER BY m.steps_completed DESC LIMIT 1) l
	CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(l.m) = 'object' THEN l.m ELSE '{}'::jsonb END) AS k(name, value)
	WHERE jsonb_typeof(k.value) = 'number'
	ORDER BY 1`, experimentID)
	if err != nil {
		return nil, translate(err, "metric names of experiment %d", experimentID)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, translate(err, "metric names of experiment %d", experimentID)
}
