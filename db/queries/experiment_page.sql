-- Queries of an experiment's page: notes, labels, max slots, every trial's
-- log, and each trial's checkpoint count.

-- name: SetExperimentNotes :execrows
UPDATE experiments SET notes = $2 WHERE id = $1;

-- name: AddExperimentLabel :one
-- Adds a label unless the experiment has it; returns the labels.
UPDATE experiments
SET labels = CASE WHEN sqlc.arg(label)::text = ANY(labels) THEN labels ELSE array_append(labels, sqlc.arg(label)::text) END
WHERE id = sqlc.arg(id)
RETURNING labels;

-- name: RemoveExperimentLabel :one
UPDATE experiments SET labels = array_remove(labels, sqlc.arg(label)::text)
WHERE id = sqlc.arg(id)
RETURNING labels;

-- name: SetExperimentMaxSlots :execrows
UPDATE experiments SET max_slots = $2 WHERE id = $1;

-- name: ListExperimentLogs :many
-- The lines of several tasks (an experiment's trials) after an id, oldest
-- first.
SELECT * FROM task_logs
WHERE task_id = ANY(sqlc.arg(task_ids)::text[]) AND id > sqlc.arg(after)
  AND (sqlc.narg(levels)::text[] IS NULL OR level = ANY(sqlc.narg(levels)::text[]))
  AND (sqlc.narg(search)::text IS NULL OR log ILIKE '%' || sqlc.narg(search) || '%')
ORDER BY id
LIMIT sqlc.arg(lim);

-- name: ListExperimentLogsTail :many
-- The last lines of several tasks, newest first.
SELECT * FROM task_logs
WHERE task_id = ANY(sqlc.arg(task_ids)::text[])
  AND (sqlc.narg(levels)::text[] IS NULL OR level = ANY(sqlc.narg(levels)::text[]))
  AND (sqlc.narg(search)::text IS NULL OR log ILIKE '%' || sqlc.narg(search) || '%')
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: CountExperimentCheckpoints :many
-- How many completed checkpoints each trial of an experiment has.
SELECT trial_id, count(*)::int AS checkpoints FROM checkpoints
WHERE experiment_id = $1 AND state = 'COMPLETED'
GROUP BY trial_id;

-- name: ListExperimentLatestMetricNames :many
-- The names of the training and validation metrics in each trial's latest
-- report of the group: what a live page polls for, an index lookup per
-- trial instead of a scan of every report.
SELECT DISTINCT g.group_name::text AS group_name, k.name::text AS name
FROM trials t
CROSS JOIN (VALUES ('training'), ('validation')) AS g(group_name)
CROSS JOIN LATERAL (
  SELECT m.metrics FROM metrics m
  WHERE m.trial_id = t.id AND m.group_name = g.group_name AND NOT m.hidden
  ORDER BY m.steps_completed DESC LIMIT 1
) l
CROSS JOIN LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(l.metrics->'avg_metrics') = 'object'
  THEN l.metrics->'avg_metrics' ELSE '{}'::jsonb END) AS k(name)
WHERE t.experiment_id = $1
ORDER BY 1, 2;
