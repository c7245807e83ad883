-- name: GetCheckpoint :one
SELECT * FROM checkpoints WHERE uuid = $1;

-- name: LockCheckpoint :one
SELECT uuid FROM checkpoints WHERE uuid = $1 FOR UPDATE;

-- name: CreateCheckpoint :exec
INSERT INTO checkpoints (uuid, trial_id, experiment_id, allocation_id, task_id, steps_completed, state, resources, size, metadata)
VALUES ($1, $2, $3, $4, $5, $6, 'COMPLETED', $7, $8, $9)
ON CONFLICT (uuid) DO UPDATE SET resources = EXCLUDED.resources, size = EXCLUDED.size, metadata = EXCLUDED.metadata;

-- name: ListExperimentCheckpoints :many
SELECT * FROM checkpoints WHERE experiment_id = $1 AND state = 'COMPLETED' ORDER BY trial_id, steps_completed;

-- name: ListTrialCheckpoints :many
SELECT * FROM checkpoints WHERE trial_id = $1 AND state = 'COMPLETED' ORDER BY steps_completed;

-- name: SetCheckpointDeleted :exec
UPDATE checkpoints SET state = 'DELETED' WHERE uuid = $1;

-- name: UpdateCheckpointResources :exec
UPDATE checkpoints SET resources = $2, size = $3 WHERE uuid = $1;

-- name: ListTrialMetrics :many
SELECT * FROM metrics WHERE trial_id = $1 AND group_name = $2 ORDER BY steps_completed, id;

-- name: LatestTrialMetrics :many
-- The last report of each group of a trial.
SELECT DISTINCT ON (group_name) * FROM metrics WHERE trial_id = $1 ORDER BY group_name, steps_completed DESC, id DESC;

-- name: ValidationAtStep :one
SELECT metrics FROM metrics WHERE trial_id = $1 AND group_name = 'validation' AND steps_completed = $2
ORDER BY id DESC LIMIT 1;

-- name: ListTaskLogs :many
SELECT * FROM task_logs
WHERE task_id = $1 AND id > $2
  AND (sqlc.narg(level)::text IS NULL OR level = sqlc.narg(level))
  AND (sqlc.narg(search)::text IS NULL OR log ILIKE '%' || sqlc.narg(search) || '%')
  AND (sqlc.narg(after_time)::timestamptz IS NULL OR time > sqlc.narg(after_time))
  AND (sqlc.narg(before_time)::timestamptz IS NULL OR time < sqlc.narg(before_time))
ORDER BY id
LIMIT $3;

-- name: ListExperimentMetricSeries :many
-- One metric of a group of every trial of an experiment, in trial and step
-- order; reports where it is not a number are left out.
SELECT m.trial_id, m.steps_completed, (m.metrics->'avg_metrics'->>sqlc.arg(metric)::text)::float8 AS value
FROM metrics m JOIN trials t ON t.id = m.trial_id
WHERE t.experiment_id = sqlc.arg(experiment_id) AND m.group_name = sqlc.arg(group_name)
  AND jsonb_typeof(m.metrics->'avg_metrics'->sqlc.arg(metric)::text) = 'number'
ORDER BY m.trial_id, m.steps_completed, m.id;

-- name: ListExperimentMetricNames :many
-- The names of the metrics an experiment's trials reported, by group.
SELECT DISTINCT m.group_name, k.name::text AS name
FROM metrics m JOIN trials t ON t.id = m.trial_id
CROSS JOIN LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(m.metrics->'avg_metrics') = 'object'
  THEN m.metrics->'avg_metrics' ELSE '{}'::jsonb END) AS k(name)
WHERE t.experiment_id = $1
ORDER BY m.group_name, name;

-- name: ListTrialMetricGroups :many
-- The groups a trial reported metrics of.
SELECT DISTINCT group_name FROM metrics WHERE trial_id = $1 ORDER BY group_name;
