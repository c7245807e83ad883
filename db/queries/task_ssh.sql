-- name: CreateTaskSSHKeys :exec
INSERT INTO task_ssh_keys (task_id, login, private_key, public_key, host_private_key, host_public_key)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: TaskSSHKeys :one
SELECT * FROM task_ssh_keys WHERE task_id = $1;
