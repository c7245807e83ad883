package db_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/db"
)

// BenchmarkExperimentSeriesOf1000Trials seeds an experiment of 1,000
// trials with 1,250 validation reports each (5 M metric values) and times
// the series an experiment chart asks for (one metric, the points a trial
// the handler allows 1,000 trials: 30, read from the points metric_series
// keeps), printing the query's execution time (and its whole plan to the
// file SERIES_PLAN names), the time to seed them and the time the merger
// takes to build their series (a bulk load's are rebuilt in SQL).
func BenchmarkExperimentSeriesOf1000Trials(b *testing.B) {
	ctx := context.Background()
	d, conn, _ := freshDB(b)
	tr := newTrial(b, d)
	for _, q := range []string{
		`INSERT INTO trials (experiment_id, request_id, state, hparams, seed, steps_completed)
		 SELECT $1, 1000 + r, 'PAUSED', '{}', r, 125000 FROM generate_series(1, 999) r`,
		`INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics, reported_at)
		 SELECT t.id, 1, s * 100, 'validation', jsonb_build_object('avg_metrics', jsonb_build_object(
		   'loss', 1.0 / (s + 1) + (t.id % 97) / 1000.0, 'accuracy', 0.5, 'lr', 0.001 / s, 'grad_norm', 1 + (s * t.id) % 13 / 10.0)), now()
		 FROM trials t, generate_series(1, 1250) s WHERE t.experiment_id = $1`,
		`ANALYZE`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{tr.ExperimentID}
		}
		t0 := time.Now()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			b.Fatal(err)
		}
		b.Logf("%.40s… in %s", strings.Join(strings.Fields(q), " "), time.Since(t0).Round(time.Millisecond))
	}
	t0 := time.Now()
	if _, err := d.MergeSeries(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	b.Logf("series merged in %s", time.Since(t0).Round(time.Millisecond))
	s := db.Series{Group: "validation", Metric: "loss", MaxPoints: 30, MaxSteps: -1, AfterStep: -1}
	rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+db.ExperimentCoarseSQL, s.KeptArgs(tr.ExperimentID)...)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	// The plan goes to a file: go test cuts a benchmark's long log.
	if f := os.Getenv("SERIES_PLAN"); f != "" {
		if err := os.WriteFile(f, []byte(strings.Join(plan, "\n")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s", plan[len(plan)-1])
	b.ResetTimer()
	for b.Loop() {
		got, err := d.ExperimentSeries(ctx, tr.ExperimentID, s)
		if err != nil || len(got) != 1000 {
			b.Fatalf("%d series, %v", len(got), err)
		}
	}
}
