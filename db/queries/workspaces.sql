-- name: ListWorkspaces :many
SELECT * FROM workspace_views
WHERE (sqlc.narg(archived)::boolean IS NULL OR archived = sqlc.narg(archived))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY id;

-- name: GetWorkspace :one
SELECT * FROM workspace_views WHERE id = $1;

-- name: GetWorkspaceByName :one
SELECT * FROM workspace_views WHERE name = $1;

-- name: CreateWorkspace :one
INSERT INTO workspaces (name, user_id, immutable)
VALUES ($1, $2, $3)
RETURNING id;

-- name: RenameWorkspace :execrows
UPDATE workspaces SET name = $2 WHERE id = $1;

-- name: SetWorkspaceArchived :execrows
UPDATE workspaces SET archived = $2 WHERE id = $1;

-- name: DeleteWorkspace :execrows
DELETE FROM workspaces WHERE id = $1;

-- name: LockWorkspace :one
SELECT id FROM workspaces WHERE id = $1 FOR UPDATE;
