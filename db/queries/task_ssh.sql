-- name: CreateTaskSSHKeys :exec
INSERT INTO task_ssh_keys (task_id, login, private_key, public_key, host_private_key, host_public_key)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: TaskSSHKeys :one
SELECT * FROM task_ssh_keys WHERE task_id = $1;

-- name: SetAllocationAddr :exec
INSERT INTO allocation_addrs (allocation_id, addr) VALUES ($1, $2)
ON CONFLICT (allocation_id) DO UPDATE SET addr = excluded.addr;

-- name: RunningTrialAllocation :one
SELECT a.id, coalesce(x.addr, '')::text AS addr
FROM allocations a LEFT JOIN allocation_addrs x ON x.allocation_id = a.id
WHERE a.trial_id = $1 AND a.state = 'RUNNING'
ORDER BY a.started_at DESC, a.id DESC LIMIT 1;
