package db

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Series are merged off the ingestion path (migration 00034): InsertMetrics
// stores reports and nothing more, and MergeSeries, which the master runs
// in the background, merges those past a mark into their series.
const (
	// mergeChunk bounds the reports one merge transaction reads.
	mergeChunk = 5000
	// bulkMerge: past this many ids waiting (a bulk load), the series they
	// touch are rebuilt from the reports in SQL instead.
	bulkMerge = 50_000
)

// MergeSeries merges the reports stored since the last merge into their
// series (the points charts read), in transactions of at most mergeChunk
// reports, and says how many it read. Two at once (two masters, or one
// restarted) merge each report once: the second waits for the first and
// merges what is left.
func (db *DB) MergeSeries(ctx context.Context) (int, error) {
	bound, err := db.mergeBound(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		n, more, err := db.mergeChunk(ctx, bound)
		total += n
		if err != nil || !more {
			return total, translate(err, "metric series")
		}
	}
}

// mergeBound is the largest report id whose transaction has ended, with
// those of every smaller id: it takes, for an instant, the lock each INSERT
// into metrics shares until it commits (migration 00034). Inserts that come
// while it waits for those under way wait too, so it waits 100 ms at most
// (an insert held up, a bulk load) and then merges nothing this time.
func (db *DB) mergeBound(ctx context.Context) (int64, error) {
	var bound int64
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SET LOCAL lock_timeout = '100ms'`)
		b.Queue(`SELECT pg_advisory_xact_lock(hashtext('metric_series_insert'))`)
		b.Queue(`SELECT COALESCE(max(id), 0) FROM metrics`).QueryRow(func(r pgx.Row) error { return r.Scan(&bound) })
		return tx.SendBatch(ctx, b).Close()
	})
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		return 0, nil // a long INSERT (a bulk load) holds it: merge what is merged by now, at the next try
	}
	return bound, translate(err, "metric series")
}

// mergeChunk merges reports past the mark, up to bound, at most mergeChunk
// of them, and moves the mark past them; more says whether some are left.
func (db *DB) mergeChunk(ctx context.Context, bound int64) (n int, more bool, err error) {
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var through int64
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_advisory_xact_lock(hashtext('metric_series_merge'))`)
		// The merge's statements are planned for the rows they meet (a
		// plan cached while metric_points was small would scan it whole).
		b.Queue(`SELECT set_config('plan_cache_mode', 'force_custom_plan', true)`)
		b.Queue(`SELECT through FROM metric_series_merged`).QueryRow(func(r pgx.Row) error { return r.Scan(&through) })
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if through >= bound {
			return nil
		}
		if bound-through > bulkMerge {
			return rebuildPending(ctx, tx, through, bound)
		}
		rows, err := tx.Query(ctx, `SELECT id, trial_id FROM metrics WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`, through, bound, mergeChunk+1)
		if err != nil {
			return err
		}
		var ids, trials []int64
		var id, trial int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &trial}, func() error {
			ids, trials = append(ids, id), append(trials, trial)
			return nil
		}); err != nil {
			return err
		}
		upto := bound
		if len(ids) > mergeChunk {
			upto, more, trials = ids[mergeChunk-1], true, trials[:mergeChunk]
		}
		slices.Sort(trials)
		trials = slices.Compact(trials)
		// The trials locked, then the reports read: a change of one by a
		// trigger waiting for them is seen (it then sees the new mark).
		if _, err := tx.Exec(ctx, `SELECT metric_series_lock($1)`, trials); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT id, trial_id, group_name, steps_completed, metrics, reported_at FROM metrics
			WHERE id > $1 AND id <= $2 AND NOT hidden ORDER BY id`, through, upto)
		if err != nil {
			return err
		}
		var reports []storedReport
		var r storedReport
		if _, err := pgx.ForEachRow(rows, []any{&r.id, &r.trial, &r.group, &r.steps, &r.metrics, &r.at}, func() error {
			reports = append(reports, r)
			r.metrics = nil
			return nil
		}); err != nil {
			return err
		}
		n = len(reports)
		if err := mergeSeries(ctx, tx, reports); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE metric_series_merged SET through = $1`, upto)
		return err
	})
	return n, more, err
}

// rebuildPending rebuilds, from their reports, the series of every trial
// and group with a report past through up to bound (a bulk load), and moves
// the mark to bound.
func rebuildPending(ctx context.Context, tx pgx.Tx, through, bound int64) error {
	_, err := tx.Exec(ctx, `WITH g AS (SELECT DISTINCT trial_id, group_name FROM metrics WHERE id > $1 AND id <= $2),
		mark AS (UPDATE metric_series_merged SET through = $2 RETURNING 1)
		SELECT metric_series_lock(array_agg(trial_id)) FROM g, mark`, through, bound)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT metric_series_rebuild(array_agg(trial_id ORDER BY trial_id), array_agg(group_name ORDER BY trial_id))
		FROM (SELECT DISTINCT trial_id, group_name FROM metrics WHERE id > $1 AND id <= $2) g`, through, bound)
	return err
}
