-- User groups, their members, and role assignments (RBAC).

-- name: ListUserGroups :many
SELECT g.id, g.name, g.created_at, (SELECT count(*) FROM user_group_members m WHERE m.group_id = g.id)::int AS num_members
FROM user_groups g
WHERE (sqlc.narg(member_id)::bigint IS NULL
       OR EXISTS (SELECT 1 FROM user_group_members m WHERE m.group_id = g.id AND m.user_id = sqlc.narg(member_id)))
  AND (sqlc.narg(name)::text IS NULL OR g.name = sqlc.narg(name))
ORDER BY g.name;

-- name: GetUserGroup :one
SELECT g.id, g.name, g.created_at, (SELECT count(*) FROM user_group_members m WHERE m.group_id = g.id)::int AS num_members
FROM user_groups g WHERE g.id = $1;

-- name: GetUserGroupForUpdate :one
SELECT g.id, g.name, g.created_at, 0::int AS num_members FROM user_groups g WHERE g.id = $1 FOR UPDATE;

-- name: CreateUserGroup :one
INSERT INTO user_groups (name) VALUES ($1) RETURNING id;

-- name: RenameUserGroup :exec
UPDATE user_groups SET name = $2 WHERE id = $1;

-- name: DeleteUserGroup :exec
DELETE FROM user_groups WHERE id = $1;

-- name: AddUserGroupMember :execrows
INSERT INTO user_group_members (group_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- name: RemoveUserGroupMember :execrows
DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2;

-- name: ListUserGroupMembers :many
SELECT u.* FROM users u JOIN user_group_members m ON m.user_id = u.id WHERE m.group_id = $1 ORDER BY u.username;

-- name: CreateRoleAssignment :execrows
INSERT INTO role_assignments (role, user_id, group_id, workspace_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING;

-- name: DeleteRoleAssignment :execrows
DELETE FROM role_assignments
WHERE role = $1 AND user_id IS NOT DISTINCT FROM sqlc.narg(user_id)::bigint
  AND group_id IS NOT DISTINCT FROM sqlc.narg(group_id)::bigint
  AND workspace_id IS NOT DISTINCT FROM sqlc.narg(workspace_id)::bigint;

-- name: ListRoleAssignments :many
-- Assignments with their principal's and workspace's names, filtered by
-- any of role, user, group and workspace (scope_cluster: only cluster-wide
-- ones).
SELECT ra.id, ra.role, ra.user_id, ra.group_id, ra.workspace_id, ra.created_at,
       coalesce(u.username, '')::text AS username, coalesce(g.name, '')::text AS group_name,
       coalesce(w.name, '')::text AS workspace_name
FROM role_assignments ra
LEFT JOIN users u ON u.id = ra.user_id
LEFT JOIN user_groups g ON g.id = ra.group_id
LEFT JOIN workspaces w ON w.id = ra.workspace_id
WHERE (sqlc.narg(role)::text IS NULL OR ra.role = sqlc.narg(role))
  AND (sqlc.narg(user_id)::bigint IS NULL OR ra.user_id = sqlc.narg(user_id))
  AND (sqlc.narg(group_id)::bigint IS NULL OR ra.group_id = sqlc.narg(group_id))
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR ra.workspace_id = sqlc.narg(workspace_id))
  AND (NOT sqlc.arg(cluster_only)::boolean OR ra.workspace_id IS NULL)
ORDER BY ra.workspace_id NULLS FIRST, ra.role, u.username, g.name;

-- name: ListUserRoles :many
-- Every role a user holds, by their own assignments and their groups'.
SELECT DISTINCT role, workspace_id FROM role_holders WHERE user_id = $1;
