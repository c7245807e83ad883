-- name: GetWorkspaceSettings :one
SELECT * FROM workspace_settings WHERE workspace_id = $1;

-- name: ListWorkspaceSettings :many
SELECT * FROM workspace_settings;

-- name: SetWorkspaceSettings :exec
INSERT INTO workspace_settings (workspace_id, default_compute_pool, default_aux_pool, checkpoint_storage,
    agent_uid, agent_gid, agent_user, agent_group, namespace)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (workspace_id) DO UPDATE
SET default_compute_pool = EXCLUDED.default_compute_pool, default_aux_pool = EXCLUDED.default_aux_pool,
    checkpoint_storage = EXCLUDED.checkpoint_storage, agent_uid = EXCLUDED.agent_uid,
    agent_gid = EXCLUDED.agent_gid, agent_user = EXCLUDED.agent_user, agent_group = EXCLUDED.agent_group,
    namespace = EXCLUDED.namespace;

-- name: ListWorkspaceNamespaces :many
SELECT DISTINCT namespace FROM workspace_settings WHERE namespace <> '' ORDER BY namespace;

-- name: ListPoolBindings :many
SELECT b.pool_name, b.workspace_id, w.name AS workspace_name
FROM resource_pool_bindings b JOIN workspaces w ON w.id = b.workspace_id
ORDER BY b.pool_name, w.name;

-- name: BindPool :exec
INSERT INTO resource_pool_bindings (pool_name, workspace_id) VALUES ($1, $2)
ON CONFLICT DO NOTHING;

-- name: UnbindPool :execrows
DELETE FROM resource_pool_bindings WHERE pool_name = $1 AND workspace_id = $2;

-- name: UnbindPoolAll :execrows
DELETE FROM resource_pool_bindings WHERE pool_name = $1;

-- name: LockPoolBindings :exec
SELECT pg_advisory_xact_lock(hashtext('resource_pool_bindings'));

-- name: LockPoolBindingsShared :exec
SELECT pg_advisory_xact_lock_shared(hashtext('resource_pool_bindings'));
