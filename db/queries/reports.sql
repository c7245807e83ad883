-- name: GetCheckpoint :one
SELECT * FROM checkpoints WHERE uuid = $1;

-- name: LockCheckpoint :one
SELECT uuid FROM checkpoints WHERE uuid = $1 FOR UPDATE;

-- name: CreateCheckpoint :execrows
-- A checkpoint reported again (by its own trial, while it is not deleted)
-- has its files and metadata replaced; no row changes otherwise.
INSERT INTO checkpoints AS c (uuid, trial_id, experiment_id, allocation_id, task_id, steps_completed, state, resources, size, metadata)
VALUES ($1, $2, $3, $4, $5, $6, 'COMPLETED', $7, $8, $9)
ON CONFLICT (uuid) DO UPDATE SET resources = EXCLUDED.resources, size = EXCLUDED.size, metadata = EXCLUDED.metadata
WHERE c.trial_id = EXCLUDED.trial_id AND c.state = 'COMPLETED';

-- name: ListExperimentCheckpoints :many
SELECT * FROM checkpoints WHERE experiment_id = $1 AND state = 'COMPLETED' ORDER BY trial_id, steps_completed;

-- name: ListTrialCheckpoints :many
SELECT * FROM checkpoints WHERE trial_id = $1 AND state = 'COMPLETED' ORDER BY steps_completed;

-- name: SetCheckpointDeleted :exec
UPDATE checkpoints SET state = 'DELETED' WHERE uuid = $1;

-- name: UpdateCheckpointResources :exec
UPDATE checkpoints SET resources = $2, size = $3 WHERE uuid = $1;

-- name: ListTrialMetrics :many
SELECT * FROM metrics WHERE trial_id = $1 AND group_name = $2 AND NOT hidden ORDER BY steps_completed, id;

-- name: LatestTrialMetrics :many
-- The last report of each group of a trial.
SELECT DISTINCT ON (group_name) * FROM metrics WHERE trial_id = $1 AND NOT hidden ORDER BY group_name, steps_completed DESC, id DESC;

-- name: ValidationAtStep :one
SELECT metrics FROM metrics WHERE trial_id = $1 AND group_name = 'validation' AND steps_completed = $2 AND NOT hidden
ORDER BY id DESC LIMIT 1;

-- name: ListTaskLogs :many
SELECT * FROM task_logs
WHERE task_id = $1 AND id > $2
  AND (sqlc.narg(levels)::text[] IS NULL OR level = ANY(sqlc.narg(levels)::text[]))
  AND (sqlc.narg(search)::text IS NULL OR log ILIKE '%' || sqlc.narg(search) || '%')
  AND (sqlc.narg(after_time)::timestamptz IS NULL OR time > sqlc.narg(after_time))
  AND (sqlc.narg(before_time)::timestamptz IS NULL OR time < sqlc.narg(before_time))
  AND (sqlc.narg(ranks)::int[] IS NULL OR rank = ANY(sqlc.narg(ranks)::int[]))
  AND (sqlc.narg(sources)::text[] IS NULL OR source = ANY(sqlc.narg(sources)::text[]))
  AND (sqlc.narg(stdtypes)::text[] IS NULL OR stdtype = ANY(sqlc.narg(stdtypes)::text[]))
  AND (sqlc.narg(agent_ids)::text[] IS NULL OR agent_id = ANY(sqlc.narg(agent_ids)::text[]))
  AND (sqlc.narg(container_ids)::text[] IS NULL OR container_id = ANY(sqlc.narg(container_ids)::text[]))
ORDER BY id
LIMIT $3;

-- name: ListTaskLogsTail :many
-- The last lines of a task under the same filters as ListTaskLogs, newest
-- first: what `det trial logs --tail N` reads, an index scan backwards
-- rather than every line.
SELECT * FROM task_logs
WHERE task_id = sqlc.arg(task_id)
  AND (sqlc.narg(levels)::text[] IS NULL OR level = ANY(sqlc.narg(levels)::text[]))
  AND (sqlc.narg(search)::text IS NULL OR log ILIKE '%' || sqlc.narg(search) || '%')
  AND (sqlc.narg(after_time)::timestamptz IS NULL OR time > sqlc.narg(after_time))
  AND (sqlc.narg(before_time)::timestamptz IS NULL OR time < sqlc.narg(before_time))
  AND (sqlc.narg(ranks)::int[] IS NULL OR rank = ANY(sqlc.narg(ranks)::int[]))
  AND (sqlc.narg(sources)::text[] IS NULL OR source = ANY(sqlc.narg(sources)::text[]))
  AND (sqlc.narg(stdtypes)::text[] IS NULL OR stdtype = ANY(sqlc.narg(stdtypes)::text[]))
  AND (sqlc.narg(agent_ids)::text[] IS NULL OR agent_id = ANY(sqlc.narg(agent_ids)::text[]))
  AND (sqlc.narg(container_ids)::text[] IS NULL OR container_id = ANY(sqlc.narg(container_ids)::text[]))
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: ListExperimentMetricSeries :many
-- One metric of a group of every trial of an experiment, in trial and step
-- order; reports where it is not a number are left out.
SELECT m.trial_id, m.steps_completed, (m.metrics->'avg_metrics'->>sqlc.arg(metric)::text)::float8 AS value
FROM metrics m JOIN trials t ON t.id = m.trial_id
WHERE t.experiment_id = sqlc.arg(experiment_id) AND m.group_name = sqlc.arg(group_name)
  AND NOT m.hidden AND jsonb_typeof(m.metrics->'avg_metrics'->sqlc.arg(metric)::text) = 'number'
ORDER BY m.trial_id, m.steps_completed, m.id;

-- name: ListExperimentMetricNames :many
-- The names of the training and validation metrics an experiment's trials
-- reported, by group, as each trial's first and latest report of the
-- group name them: two index lookups a trial, where reading every report
-- took seconds at 10 M metric values. (A metric reported only in between
-- is not offered.)
SELECT DISTINCT g.group_name::text AS group_name, k.name::text AS name
FROM trials t
CROSS JOIN (VALUES ('training'), ('validation')) AS g(group_name)
CROSS JOIN LATERAL (
  (SELECT m.metrics FROM metrics m
   WHERE m.trial_id = t.id AND m.group_name = g.group_name AND NOT m.hidden
   ORDER BY m.steps_completed LIMIT 1)
  UNION ALL
  (SELECT m.metrics FROM metrics m
   WHERE m.trial_id = t.id AND m.group_name = g.group_name AND NOT m.hidden
   ORDER BY m.steps_completed DESC LIMIT 1)
) l
CROSS JOIN LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(l.metrics->'avg_metrics') = 'object'
  THEN l.metrics->'avg_metrics' ELSE '{}'::jsonb END) AS k(name)
WHERE t.experiment_id = $1
ORDER BY 1, 2;

-- name: ListTrialMetricGroups :many
-- The groups a trial reported metrics of.
SELECT DISTINCT group_name FROM metrics WHERE trial_id = $1 AND NOT hidden ORDER BY group_name;

-- name: InsertMetrics :exec
-- A batch of reports, at most one per trial, group, step and run. A report
-- at a step already stored merges into it, as Determined's do: a retried
-- POST changes nothing, and metrics reported separately at one step (loss,
-- then accuracy) are kept together.
INSERT INTO metrics AS m (trial_id, trial_run_id, steps_completed, group_name, metrics, reported_at)
SELECT unnest(sqlc.arg(trial_ids)::bigint[]), unnest(sqlc.arg(trial_run_ids)::int[]), unnest(sqlc.arg(steps)::bigint[]),
  unnest(sqlc.arg(group_names)::text[]), unnest(sqlc.arg(metrics)::text[])::jsonb, unnest(sqlc.arg(reported_ats)::timestamptz[])
ON CONFLICT (trial_id, group_name, steps_completed, trial_run_id) DO UPDATE
SET metrics = jsonb_set(m.metrics, '{avg_metrics}', COALESCE(m.metrics->'avg_metrics', '{}') || COALESCE(EXCLUDED.metrics->'avg_metrics', '{}'))
WHERE NOT COALESCE(m.metrics->'avg_metrics', '{}') @> COALESCE(EXCLUDED.metrics->'avg_metrics', '{}');

-- name: HideMetricsPastRestart :execrows
-- A trial's run restarts from its latest checkpoint (from scratch without
-- one): the reports of its earlier runs past that checkpoint's step are
-- hidden.
UPDATE metrics m SET hidden = true
WHERE m.trial_id = sqlc.arg(trial_id) AND m.trial_run_id < sqlc.arg(run_id) AND NOT m.hidden
  AND m.steps_completed > COALESCE((SELECT c.steps_completed FROM trials t JOIN checkpoints c ON c.uuid = t.latest_checkpoint
    WHERE t.id = sqlc.arg(trial_id)), 0);

-- name: TellSearcher :one
-- Marks a validation report told to the searcher and returns whether it
-- must not be told now: it was told before, or is hidden. No row when the
-- report is not stored.
UPDATE metrics m SET told_searcher = true
FROM (SELECT r.id, r.told_searcher, r.hidden FROM metrics r
  WHERE r.trial_id = sqlc.arg(trial_id) AND r.trial_run_id = sqlc.arg(trial_run_id) AND r.group_name = 'validation'
    AND r.steps_completed = sqlc.arg(steps_completed)
  FOR UPDATE) before
WHERE m.id = before.id
RETURNING (before.told_searcher OR before.hidden)::bool AS skip;

-- name: ResetTrialBestValidation :exec
-- The best searcher metric of a trial's visible validation reports.
UPDATE trials SET best_validation = (
  SELECT CASE WHEN sqlc.arg(smaller_is_better)::bool THEN min(v.value) ELSE max(v.value) END
  FROM (SELECT (m.metrics->'avg_metrics'->>sqlc.arg(metric)::text)::float8 AS value FROM metrics m
    WHERE m.trial_id = sqlc.arg(id) AND m.group_name = 'validation' AND NOT m.hidden
      AND (jsonb_typeof(m.metrics->'avg_metrics'->sqlc.arg(metric)::text) = 'number'
        OR m.metrics->'avg_metrics'->>sqlc.arg(metric)::text IN ('Infinity', '-Infinity'))) v)
WHERE id = sqlc.arg(id);

-- name: ResetExperimentBestValidation :exec
-- The best of an experiment's trials' best searcher metrics.
UPDATE experiments SET best_validation = (
  SELECT CASE WHEN sqlc.arg(smaller_is_better)::bool THEN min(t.best_validation) ELSE max(t.best_validation) END
  FROM trials t WHERE t.experiment_id = sqlc.arg(id))
WHERE id = sqlc.arg(id);

-- name: ListTrialCheckpointsPage :many
SELECT * FROM checkpoints WHERE trial_id = $1 AND state = 'COMPLETED'
ORDER BY steps_completed DESC, uuid LIMIT $2 OFFSET $3;

-- name: CountTrialCheckpoints :one
SELECT count(*) FROM checkpoints WHERE trial_id = $1 AND state = 'COMPLETED';

-- name: ListTrialMetricsTail :many
-- A trial's last n reports of a group, latest first.
SELECT * FROM metrics WHERE trial_id = $1 AND group_name = $2 AND NOT hidden
ORDER BY steps_completed DESC, id DESC LIMIT $3;
