-- name: CreateAllocation :exec
-- Its token comes at launch (StartAllocation).
INSERT INTO allocations (id, task_id, trial_id, state, slots)
VALUES ($1, $2, $3, 'PENDING', $4);

-- name: GetAllocation :one
SELECT * FROM allocations WHERE id = $1;

-- name: GetAllocationByToken :one
-- An allocation by its token, with its trial's experiment (0 for tasks
-- that are not trials).
SELECT sqlc.embed(a), COALESCE(t.experiment_id, 0)::bigint AS experiment_id,
       COALESCE(t.excluded_agents, '{}')::text[] AS excluded_agents
FROM allocations a LEFT JOIN trials t ON t.id = a.trial_id
WHERE a.token_hash = $1;

-- name: ListPendingAllocations :many
SELECT * FROM allocations WHERE state = 'PENDING' ORDER BY created_at, id;

-- name: ListRunningAllocations :many
SELECT * FROM allocations WHERE state = 'RUNNING' ORDER BY started_at, id;

-- name: ListTrialAllocations :many
SELECT * FROM allocations WHERE trial_id = $1 ORDER BY created_at;

-- name: CurrentTrialAllocation :one
SELECT * FROM allocations WHERE trial_id = $1 AND state <> 'TERMINATED' ORDER BY created_at DESC LIMIT 1;

-- name: StartAllocation :execrows
-- The token is made when the allocation starts, so only its hash is kept.
-- The pool and workspace it runs in are kept for usage: those of its
-- trial's experiment, or of its task.
UPDATE allocations al SET state = 'RUNNING', slot_ids = $2, token_hash = $3, slot_agents = $4, started_at = now(),
    resource_pool = coalesce(
        (SELECT ex.resource_pool FROM trials tr JOIN experiments ex ON ex.id = tr.experiment_id WHERE tr.id = al.trial_id),
        (SELECT tk.resource_pool FROM tasks tk WHERE tk.id = al.task_id AND al.trial_id IS NULL)),
    workspace_id = coalesce(
        (SELECT pr.workspace_id FROM trials tr JOIN experiments ex ON ex.id = tr.experiment_id
         JOIN projects pr ON pr.id = ex.project_id WHERE tr.id = al.trial_id),
        (SELECT pr.workspace_id FROM tasks tk JOIN projects pr ON pr.id = tk.project_id
         WHERE tk.id = al.task_id AND al.trial_id IS NULL))
WHERE al.id = $1 AND al.state = 'PENDING';

-- name: EndAllocation :execrows
UPDATE allocations SET state = 'TERMINATED', exit_code = $2, exit_reason = $3, ended_at = now()
WHERE id = $1 AND state <> 'TERMINATED';

-- name: RequestPreemption :execrows
UPDATE allocations SET preempt = true, kill_after = COALESCE(kill_after, $2)
WHERE id = $1 AND state = 'RUNNING';

-- name: AckPreemption :exec
UPDATE allocations SET preempt_acked = true WHERE id = $1;

-- name: ListOverdueAllocations :many
SELECT * FROM allocations WHERE state = 'RUNNING' AND kill_after IS NOT NULL AND kill_after < sqlc.arg(now)::timestamptz;

-- name: ListLiveAllocations :many
-- Allocations that wait or run, with their experiment (0 for tasks that
-- are not trials), in creation order.
SELECT sqlc.embed(a), COALESCE(t.experiment_id, 0)::bigint AS experiment_id,
       COALESCE(t.excluded_agents, '{}')::text[] AS excluded_agents
FROM allocations a LEFT JOIN trials t ON t.id = a.trial_id
WHERE a.state IN ('PENDING', 'RUNNING')
ORDER BY a.created_at, a.id;

-- name: UnstartAllocation :exec
-- Back to pending: the resource manager could not take it after all.
UPDATE allocations SET state = 'PENDING', slot_ids = '{}', slot_agents = '{}', started_at = NULL WHERE id = $1 AND state = 'RUNNING';

-- name: UpsertRendezvous :exec
-- A pod's address in its allocation's rendezvous; posting again replaces it.
INSERT INTO allocation_rendezvous (allocation_id, rank, addr, slots)
VALUES ($1, $2, $3, $4)
ON CONFLICT (allocation_id, rank) DO UPDATE SET addr = EXCLUDED.addr, slots = EXCLUDED.slots;

-- name: ListRendezvous :many
-- The pods of an allocation that have posted their address, by rank.
SELECT rank, addr, slots FROM allocation_rendezvous WHERE allocation_id = $1 ORDER BY rank;

-- name: ClearRendezvous :exec
-- Forgets where an allocation's pods ran, before it is launched again.
DELETE FROM allocation_rendezvous WHERE allocation_id = $1;
