-- name: ListTemplates :many
SELECT * FROM template_views
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR workspace_id = sqlc.narg(workspace_id))
ORDER BY name;

-- name: GetTemplate :one
SELECT * FROM template_views WHERE name = $1;

-- name: CreateTemplate :exec
INSERT INTO templates (name, config_yaml, workspace_id, user_id) VALUES ($1, $2, $3, $4);

-- name: UpdateTemplate :execrows
UPDATE templates SET config_yaml = $2, updated_at = now() WHERE name = $1;

-- name: DeleteTemplate :execrows
DELETE FROM templates WHERE name = $1;

-- name: LockTemplate :one
SELECT name FROM templates WHERE name = $1 FOR UPDATE;
