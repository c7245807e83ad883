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

-- name: AllocationUsage :many
-- Slot-seconds of allocations by period, user, resource pool and
-- workspace: each allocation's time running (started to ended, or now)
-- that falls in a period, times its slots. A trial's allocation counts
-- for its experiment's owner, a task's for its own; each counts in the
-- pool and workspace it ran in (recorded at its start; for allocations
-- started before they were recorded, the current ones).
WITH periods AS (
    SELECT unnest(sqlc.arg(starts)::timestamptz[]) AS period_start, unnest(sqlc.arg(ends)::timestamptz[]) AS period_end
), used AS (
    SELECT al.slots, al.started_at AS s, coalesce(al.ended_at, now()) AS e,
           coalesce(ex.user_id, tk.user_id) AS user_id,
           coalesce(al.resource_pool, ex.resource_pool, tk.resource_pool) AS pool,
           coalesce(al.workspace_id, pr.workspace_id) AS workspace_id
    FROM allocations al
    LEFT JOIN trials tr ON tr.id = al.trial_id
    LEFT JOIN experiments ex ON ex.id = tr.experiment_id
    LEFT JOIN tasks tk ON tk.id = al.task_id AND al.trial_id IS NULL
    LEFT JOIN projects pr ON pr.id = coalesce(ex.project_id, tk.project_id)
    WHERE al.started_at IS NOT NULL AND al.slots > 0
      AND al.started_at < sqlc.arg(until)::timestamptz AND coalesce(al.ended_at, now()) > sqlc.arg(since)::timestamptz
)
SELECT p.period_start::timestamptz AS period_start, u.username, used.pool, w.name AS workspace,
       sum(used.slots * extract(epoch FROM least(used.e, p.period_end) - greatest(used.s, p.period_start)))::float8 AS slot_seconds
FROM periods p
JOIN used ON used.s < p.period_end AND used.e > p.period_start
JOIN users u ON u.id = used.user_id
JOIN workspaces w ON w.id = used.workspace_id
GROUP BY p.period_start, u.username, used.pool, w.name
ORDER BY p.period_start, u.username, used.pool, w.name;

-- name: ListSlotStates :many
SELECT * FROM slot_states ORDER BY agent_id, slot_id;

-- name: DisableSlot :one
INSERT INTO slot_states (agent_id, slot_id, draining, disabled_by)
VALUES (sqlc.arg(agent_id), sqlc.arg(slot_id), sqlc.arg(draining), sqlc.narg(disabled_by))
ON CONFLICT (agent_id, slot_id) DO UPDATE
SET draining = EXCLUDED.draining, disabled_by = EXCLUDED.disabled_by, disabled_at = now()
RETURNING *;

-- name: EnableSlot :execrows
DELETE FROM slot_states WHERE agent_id = $1 AND slot_id = $2;
