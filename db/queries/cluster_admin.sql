-- name: GetClusterMessage :one
SELECT * FROM cluster_message;

-- name: SetClusterMessage :one
INSERT INTO cluster_message (message, start_time, end_time, created_by)
VALUES (sqlc.arg(message), sqlc.arg(start_time), sqlc.narg(end_time), sqlc.narg(created_by))
ON CONFLICT (only_one) DO UPDATE
SET message = EXCLUDED.message, start_time = EXCLUDED.start_time, end_time = EXCLUDED.end_time,
    created_by = EXCLUDED.created_by, created_time = now()
RETURNING *;

-- name: DeleteClusterMessage :exec
DELETE FROM cluster_message;

-- name: ListAgentStates :many
SELECT * FROM agent_states ORDER BY agent_id;

-- name: DisableAgent :one
INSERT INTO agent_states (agent_id, draining, disabled_by)
VALUES (sqlc.arg(agent_id), sqlc.arg(draining), sqlc.narg(disabled_by))
ON CONFLICT (agent_id) DO UPDATE
SET draining = EXCLUDED.draining, disabled_by = EXCLUDED.disabled_by, disabled_at = now()
RETURNING *;

-- name: EnableAgent :execrows
DELETE FROM agent_states WHERE agent_id = $1;
