package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// Scale of the UI benchmark's database.
const (
	seedExperiments = 10_000
	seedTrials      = 100_000 // 10 for most experiments, 100 for the big one
	bigTrials       = 100
	seedValues      = 5_000_000 // metric values: 4 a report
)

// seeded is what seedScale made.
type seeded struct {
	Big      int64 // the experiment with 100 trials and the longest series
	BigTrial int64 // one of its trials
	Others   [2]int64
}

// seedScale fills a test master's database in bulk, in SQL: 20 users, 50
// projects, 10,000 experiments (most of them finished, some active or
// paused, one in twenty of the finished ones archived), 100,000 trials and
// 1,250,000 metric reports of 4 values each (5,000,000 values): 6 training
// and 6 validation reports for most trials, 256 of each for the big
// experiment's 100 trials.
func seedScale(tb testing.TB, m *handlerstest.Master) seeded {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, m.DatabaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	start := time.Now()
	var first int64
	steps := []struct{ what, sql string }{
		{"users", `INSERT INTO users (username) SELECT 'user' || i FROM generate_series(1, 20) i`},
		{"workspaces", `INSERT INTO workspaces (name, user_id) SELECT 'ws' || i, 1 FROM generate_series(1, 10) i`},
		{"projects", `INSERT INTO projects (name, workspace_id, user_id)
			SELECT 'proj' || j, w.id, 1 FROM workspaces w, generate_series(1, 5) j WHERE w.name LIKE 'ws%'`},
		{"experiments", fmt.Sprintf(`
			INSERT INTO experiments (project_id, user_id, name, description, labels, state, archived, config, original_config,
			                         searcher_state, seed, progress, best_validation, created_at, ended_at, resource_pool)
			SELECT p.ids[1 + i %% cardinality(p.ids)], u.ids[1 + (i * 7) %% cardinality(u.ids)],
			       'exp-' || i || '-' || (ARRAY['resnet', 'bert', 'gpt', 'mnist', 'vit'])[1 + i %% 5],
			       'Run ' || i || ' on ' || (ARRAY['cifar10', 'imagenet', 'squad', 'wikitext'])[1 + i %% 4],
			       CASE i %% 4 WHEN 0 THEN ARRAY['vision'] WHEN 1 THEN ARRAY['nlp', 'baseline'] WHEN 2 THEN ARRAY['tuning'] ELSE '{}' END,
			       st, st NOT IN ('ACTIVE', 'PAUSED') AND i %% 20 = 3,
			       jsonb_build_object(
			         'name', 'exp-' || i, 'description', 'Run ' || i, 'entrypoint', 'python3 train.py',
			         'searcher', jsonb_build_object('name', (ARRAY['single', 'random', 'grid', 'adaptive_asha'])[1 + i %% 4],
			           'metric', CASE WHEN i %% 3 = 0 THEN 'accuracy' ELSE 'loss' END, 'smaller_is_better', i %% 3 <> 0,
			           'max_trials', 10, 'max_length', jsonb_build_object('batches', 1000), 'source_trial_id', null),
			         'hyperparameters', jsonb_build_object(
			           'lr', jsonb_build_object('type', 'log', 'minval', -4, 'maxval', -1, 'base', 10),
			           'batch_size', jsonb_build_object('type', 'categorical', 'vals', jsonb_build_array(16, 32, 64, 128)),
			           'dropout', jsonb_build_object('type', 'double', 'minval', 0, 'maxval', 0.5)),
			         'resources', jsonb_build_object('slots_per_trial', 1, 'resource_pool', 'default', 'weight', 1,
			           'priority', null, 'max_slots', null, 'shm_size', null, 'devices', '[]'::jsonb),
			         'checkpoint_storage', jsonb_build_object('type', 'shared_fs', 'host_path', '/var/lib/checkpoints',
			           'storage_path', null, 'save_experiment_best', 0, 'save_trial_best', 1, 'save_trial_latest', 1),
			         'environment', jsonb_build_object('image', jsonb_build_object('cpu', 'determinedai/pytorch-ngc-dev:0.38.0',
			           'cuda', 'determinedai/pytorch-ngc-dev:0.38.0'), 'environment_variables',
			           jsonb_build_object('cpu', '[]'::jsonb, 'cuda', '[]'::jsonb), 'pod_spec', null, 'force_pull_image', false),
			         'max_restarts', 5, 'min_validation_period', jsonb_build_object('batches', 100),
			         'records_per_epoch', 50000, 'scheduling_unit', 100, 'data', jsonb_build_object('url', 'https://example.com/d/' || i)),
			       'name: exp-' || i, '{}'::jsonb, i,
			       CASE WHEN st = 'COMPLETED' THEN 1 ELSE (i %% 100) / 100.0 END,
			       CASE WHEN i %% 17 = 0 THEN NULL ELSE ((i * 7919) %% 1000) / 1000.0 END,
			       now() - (%[1]d - i) * interval '50 minutes',
			       CASE WHEN st IN ('ACTIVE', 'PAUSED') THEN NULL
			            ELSE now() - (%[1]d - i) * interval '50 minutes' + (10 + i %% 300) * interval '1 minute' END,
			       CASE WHEN i %% 5 = 0 THEN 'gpu' ELSE 'default' END
			FROM generate_series(1, %[1]d) i,
			     (SELECT array_agg(id ORDER BY id) AS ids FROM projects) p,
			     (SELECT array_agg(id ORDER BY id) AS ids FROM users) u,
			     LATERAL (SELECT CASE WHEN i = %[1]d OR i %% 50 = 0 THEN 'ACTIVE' WHEN i %% 50 = 1 THEN 'PAUSED'
			                          WHEN i %% 10 = 7 THEN 'CANCELED' WHEN i %% 10 = 8 THEN 'ERROR'
			                          ELSE 'COMPLETED' END AS st) s`, seedExperiments)},
		{"trials", fmt.Sprintf(`
			INSERT INTO trials (experiment_id, request_id, state, hparams, seed, steps_completed, best_validation, progress,
			                    created_at, ended_at)
			SELECT e.id, r, CASE WHEN e.state IN ('ACTIVE', 'PAUSED') THEN e.state ELSE 'COMPLETED' END,
			       jsonb_build_object('lr', 0.0001 * (1 + (e.id * r) %% 100), 'batch_size', (ARRAY[16, 32, 64, 128])[1 + r %% 4],
			         'dropout', (r %% 5) / 10.0),
			       e.seed * 1000 + r, 600, e.best_validation, e.progress, e.created_at, e.ended_at
			FROM (SELECT e.*, row_number() OVER (ORDER BY e.id) AS n FROM experiments e) e,
			     generate_series(1, CASE WHEN e.n = %[1]d THEN %[2]d WHEN e.n > %[1]d - 10 THEN 0 ELSE 10 END) r`,
			seedExperiments, bigTrials)},
		{"metrics", fmt.Sprintf(`
			INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics, reported_at)
			SELECT t.id, 1, s * 100, g,
			       jsonb_build_object('avg_metrics', jsonb_build_object(
			         'loss', 1.0 / (s + 1) + (t.id %% 97) / 1000.0, 'accuracy', 1 - 1.0 / (s + 2) - (t.id %% 89) / 1000.0,
			         'lr', 0.001 / s, 'grad_norm', 1 + (s * t.id) %% 13 / 10.0)),
			       t.created_at + s * interval '1 minute'
			FROM trials t, generate_series(1, CASE WHEN t.experiment_id = (SELECT max(id) FROM experiments) THEN %d ELSE 6 END) s,
			     unnest(ARRAY['training', 'validation']) g`, 256)},
		{"statistics", `VACUUM ANALYZE`},
	}
	for _, s := range steps {
		t0 := time.Now()
		if _, err := conn.Exec(ctx, s.sql); err != nil {
			tb.Fatalf("seed %s: %v", s.what, err)
		}
		tb.Logf("seeded %s in %s", s.what, time.Since(t0).Round(time.Millisecond))
	}
	var out seeded
	var trials, values int64
	err = conn.QueryRow(ctx, `SELECT (SELECT min(id) FROM experiments), (SELECT max(id) FROM experiments),
		(SELECT count(*) FROM trials), (SELECT count(*) * 4 FROM metrics)`).Scan(&first, &out.Big, &trials, &values)
	if err != nil {
		tb.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT min(id) FROM trials WHERE experiment_id = $1`, out.Big).Scan(&out.BigTrial); err != nil {
		tb.Fatal(err)
	}
	out.Others = [2]int64{first + 100, first + 101}
	if trials != seedTrials || values != seedValues {
		tb.Fatalf("seeded %d trials and %d metric values, want %d and %d", trials, values, seedTrials, seedValues)
	}
	tb.Logf("seeded %d experiments, %d trials, %d metric values in %s", seedExperiments, trials, values, time.Since(start).Round(time.Millisecond))
	return out
}
