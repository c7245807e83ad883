-- name: ListProjects :many
SELECT * FROM project_views
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(archived)::boolean IS NULL OR archived = sqlc.narg(archived))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY workspace_id, id;

-- name: GetProject :one
SELECT * FROM project_views WHERE id = $1;

-- name: GetProjectByName :one
SELECT * FROM project_views WHERE workspace_id = $1 AND name = $2;

-- name: CreateProject :one
INSERT INTO projects (name, description, workspace_id, user_id, immutable)
VALUES ($1, $2, $3, $4, $5)
RETURNING id;

-- name: UpdateProject :execrows
UPDATE projects SET name = $2, description = $3 WHERE id = $1;

-- name: SetProjectArchived :execrows
UPDATE projects SET archived = $2 WHERE id = $1;

-- name: DeleteProject :execrows
DELETE FROM projects WHERE id = $1;

-- name: LockProject :one
SELECT id FROM projects WHERE id = $1 FOR UPDATE;
