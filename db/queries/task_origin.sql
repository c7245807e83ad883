-- name: CreateTaskTicket :exec
INSERT INTO task_tickets (token_hash, task_id, user_id, session_id, path, expires_at, port)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: TakeTaskTicket :one
-- Removes a ticket and returns it: a ticket is used once, whether it is
-- still good or not.
DELETE FROM task_tickets WHERE token_hash = $1 RETURNING *;

-- name: GetSessionExpiry :one
SELECT expires_at FROM sessions WHERE id = $1;

-- name: CreateTaskSession :exec
INSERT INTO task_sessions (token_hash, task_id, user_id, session_id, expires_at, port)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: GetTaskSessionUser :one
-- The active user behind a live task session of one task's service
-- (port 0) or one of its HTTP proxy ports.
SELECT sqlc.embed(users), task_sessions.expires_at
FROM task_sessions JOIN users ON users.id = task_sessions.user_id
WHERE task_sessions.token_hash = $1 AND task_sessions.task_id = $2 AND task_sessions.port = sqlc.arg(port)
  AND task_sessions.expires_at > sqlc.arg(now) AND users.active;

-- name: DeleteExpiredTaskTickets :execrows
DELETE FROM task_tickets WHERE expires_at <= now();

-- name: DeleteExpiredTaskSessions :execrows
DELETE FROM task_sessions WHERE expires_at <= now();
