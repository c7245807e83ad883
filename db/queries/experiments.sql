-- name: CreateExperiment :one
INSERT INTO experiments (project_id, user_id, name, description, labels, state, config, original_config,
                         template, parent_id, searcher_state, seed, priority, weight, max_slots, resource_pool)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
RETURNING id;

-- name: CreateExperimentContextChunk :exec
INSERT INTO experiment_context_chunks (experiment_id, seq, data) VALUES ($1, $2, $3);

-- name: GetExperimentContextChunk :one
SELECT data FROM experiment_context_chunks WHERE experiment_id = $1 AND seq = $2;

-- name: CopyExperimentContext :exec
INSERT INTO experiment_context_chunks (experiment_id, seq, data)
SELECT sqlc.arg(to_id)::bigint, c.seq, c.data FROM experiment_context_chunks c WHERE c.experiment_id = sqlc.arg(from_id);

-- name: GetExperiment :one
SELECT * FROM experiment_views WHERE id = $1;

-- name: GetExperimentOriginalConfig :one
SELECT original_config FROM experiments WHERE id = $1;

-- name: LockExperiment :one
-- The searcher's state, locked: every change to an experiment's search is
-- made under this lock, so events of one experiment apply one at a time.
SELECT id, state, config, searcher_state, searcher_done, searcher_failed, restarts, seed
FROM experiments WHERE id = $1 FOR UPDATE;

-- name: LockExperimentRow :one
SELECT id FROM experiments WHERE id = $1 FOR UPDATE;

-- name: ListExperiments :many
SELECT * FROM experiment_views
WHERE (sqlc.narg(project_id)::bigint IS NULL OR project_id = sqlc.narg(project_id))
  AND (sqlc.narg(archived)::boolean IS NULL OR archived = sqlc.narg(archived))
  AND (cardinality(sqlc.arg(states)::text[]) = 0 OR state = ANY(sqlc.arg(states)::text[]))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY id DESC
LIMIT sqlc.arg(lim) OFFSET sqlc.arg(off);

-- name: ListActiveExperimentIDs :many
SELECT id FROM experiments
WHERE state IN ('ACTIVE', 'PAUSED', 'STOPPING_CANCELED', 'STOPPING_KILLED', 'STOPPING_COMPLETED', 'STOPPING_ERROR')
ORDER BY id;

-- name: SetExperimentState :exec
UPDATE experiments SET state = $2,
  ended_at = CASE WHEN $2 IN ('COMPLETED', 'CANCELED', 'ERROR') THEN now() ELSE NULL END
WHERE id = $1;

-- name: SaveSearcher :exec
UPDATE experiments SET searcher_state = $2, searcher_done = $3, searcher_failed = $4, progress = $5
WHERE id = $1;

-- name: AddExperimentRestart :one
UPDATE experiments SET restarts = restarts + 1 WHERE id = $1 RETURNING restarts;

-- name: SetExperimentArchived :exec
UPDATE experiments SET archived = $2 WHERE id = $1;

-- name: UpdateExperiment :exec
UPDATE experiments SET name = $2, description = $3, labels = $4, notes = $5, priority = $6, weight = $7, max_slots = $8
WHERE id = $1;

-- name: MoveExperiment :exec
UPDATE experiments SET project_id = $2 WHERE id = $1;

-- name: DeleteExperiment :exec
DELETE FROM experiments WHERE id = $1;

-- name: SetExperimentBestValidation :exec
UPDATE experiments SET best_validation = $2 WHERE id = $1;

-- name: ListQueuedExperiments :many
-- The jobs of the queue: experiments that may still run, in queue order.
SELECT * FROM experiment_views
WHERE state IN ('ACTIVE', 'STOPPING_CANCELED', 'STOPPING_KILLED', 'STOPPING_COMPLETED', 'STOPPING_ERROR')
  AND (sqlc.narg(pool)::text IS NULL OR resource_pool = sqlc.narg(pool))
ORDER BY resource_pool, queue_position, id;

-- name: LockQueue :exec
-- One lock per pool's queue, held to the end of the transaction: reorders
-- of a pool apply one after another, and never deadlock on row order.
SELECT pg_advisory_xact_lock(hashtext('resolute-queue:' || sqlc.arg(pool)::text));

-- name: ListPoolQueue :many
-- A pool's queue: its experiments that have not ended ("experiment-N") and
-- its live tasks, whose positions share one scale (microseconds since the
-- epoch at submission, then whatever moves made of them).
SELECT ('experiment-' || e.id)::text AS job_id, e.queue_position FROM experiments e
WHERE e.resource_pool = sqlc.arg(pool)::text AND e.state NOT IN ('COMPLETED', 'CANCELED', 'ERROR')
UNION ALL
SELECT t.id AS job_id, t.queue_position FROM tasks t
WHERE t.resource_pool = sqlc.arg(pool)::text AND t.state <> 'TERMINATED'
ORDER BY queue_position, job_id;

-- name: SetQueuePosition :exec
UPDATE experiments SET queue_position = $2 WHERE id = $1;

-- name: SetTaskQueuePosition :exec
UPDATE tasks SET queue_position = $2 WHERE id = $1;

-- name: SetExperimentScheduling :exec
UPDATE experiments SET priority = $2, weight = $3, resource_pool = $4 WHERE id = $1;
