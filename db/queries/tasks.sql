-- name: NextTaskNumber :one
SELECT nextval('task_numbers')::bigint;

-- name: CreateTask :exec
INSERT INTO tasks (id, type, state, description, config, user_id, project_id, resource_pool, priority, slots, service_token,
                   experiment_ids, trial_ids)
VALUES ($1, $2, 'QUEUED', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- name: GetTask :one
SELECT * FROM task_views WHERE id = $1;

-- name: CreateTaskContextChunk :exec
INSERT INTO task_context_chunks (task_id, seq, data) VALUES ($1, $2, $3);

-- name: GetTaskContextChunk :one
SELECT data FROM task_context_chunks WHERE task_id = $1 AND seq = $2;

-- name: ListTasks :many
SELECT * FROM task_views
WHERE (sqlc.narg(type)::text IS NULL OR type = sqlc.narg(type))
  AND (sqlc.narg(live)::boolean IS NULL OR (state <> 'TERMINATED') = sqlc.narg(live))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY created_at DESC;

-- name: SetTaskState :exec
UPDATE tasks SET state = $2,
  ended_at = CASE WHEN $2 = 'TERMINATED' THEN now() ELSE ended_at END
WHERE id = $1;

-- name: EndTask :exec
UPDATE tasks SET state = 'TERMINATED', exit_code = $2, end_reason = $3, ended_at = now(), ready = false
WHERE id = $1 AND state <> 'TERMINATED';

-- name: SetTaskService :exec
UPDATE tasks SET service_port = $2 WHERE id = $1;

-- name: SetTaskServiceHost :exec
UPDATE tasks SET service_host = $2 WHERE id = $1;

-- name: SetTaskReady :exec
UPDATE tasks SET ready = true WHERE id = $1;

-- name: SetTaskPriority :exec
UPDATE tasks SET priority = $2 WHERE id = $1;

-- name: AddCheckpointGC :exec
-- The checkpoints a CHECKPOINT_GC task deletes.
INSERT INTO checkpoint_gc (task_id, uuid)
SELECT sqlc.arg(task_id), unnest(sqlc.arg(uuids)::uuid[]);

-- name: CheckpointsBeingCollected :many
-- Which of these checkpoints a CHECKPOINT_GC task that has not ended holds.
SELECT g.uuid FROM checkpoint_gc g JOIN tasks t ON t.id = g.task_id
WHERE t.state <> 'TERMINATED' AND g.uuid = ANY(sqlc.arg(uuids)::uuid[]);

-- name: TaskCheckpointGC :many
-- The checkpoints a CHECKPOINT_GC task deletes.
SELECT uuid FROM checkpoint_gc WHERE task_id = $1 ORDER BY uuid;
