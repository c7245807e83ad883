-- name: GetUser :one
SELECT * FROM users WHERE id = $1;

-- name: GetUserByUsername :one
SELECT * FROM users WHERE username = $1;

-- name: ListUsers :many
SELECT * FROM users ORDER BY username;

-- name: CreateUser :one
INSERT INTO users (username, display_name, password_hash, admin, active)
VALUES ($1, $2, $3, $4, true)
RETURNING *;

-- name: CreateUserIfMissing :one
-- Used at start-up for the built-in accounts; returns nothing when it exists.
INSERT INTO users (username, password_hash, admin, active)
VALUES ($1, $2, $3, true)
ON CONFLICT (username) DO NOTHING
RETURNING *;

-- name: UpdateUser :one
UPDATE users SET display_name = $2, admin = $3, active = $4
WHERE id = $1
RETURNING *;

-- name: SetUserPassword :exec
UPDATE users SET password_hash = $2 WHERE id = $1;

-- name: CountActiveAdmins :one
SELECT count(*) FROM users WHERE admin AND active;

-- name: LockUser :one
SELECT id FROM users WHERE id = $1 FOR UPDATE;

-- name: LockActiveAdmins :many
-- Taken before a change that may leave no active administrator, so two
-- such changes cannot both see the other's administrator still there.
SELECT id FROM users WHERE admin AND active ORDER BY id FOR UPDATE;

-- name: GetAgentUserGroup :one
SELECT * FROM agent_user_groups WHERE user_id = $1;

-- name: ListAgentUserGroups :many
SELECT * FROM agent_user_groups;

-- name: SetAgentUserGroup :exec
INSERT INTO agent_user_groups (user_id, agent_uid, agent_gid, agent_user, agent_group)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (user_id) DO UPDATE
SET agent_uid = EXCLUDED.agent_uid, agent_gid = EXCLUDED.agent_gid,
    agent_user = EXCLUDED.agent_user, agent_group = EXCLUDED.agent_group;

-- name: DeleteAgentUserGroup :exec
DELETE FROM agent_user_groups WHERE user_id = $1;
