-- name: ListTemplates :many
SELECT * FROM template_views
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
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
