-- name: ListModels :many
SELECT * FROM model_views
WHERE (sqlc.narg(archived)::boolean IS NULL OR archived = sqlc.narg(archived))
  AND (sqlc.narg(search)::text IS NULL OR name ILIKE '%' || sqlc.narg(search) || '%' OR description ILIKE '%' || sqlc.narg(search) || '%')
  AND (cardinality(sqlc.arg(labels)::text[]) = 0 OR labels @> sqlc.arg(labels)::text[])
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY CASE WHEN sqlc.arg(sort)::text = 'name' THEN name END,
         CASE WHEN sqlc.arg(sort)::text = 'updated' THEN updated_at END DESC,
         CASE WHEN sqlc.arg(sort)::text = 'versions' THEN num_versions END DESC,
         id DESC;

-- name: GetModelByName :one
SELECT * FROM model_views WHERE name = $1;

-- name: CreateModel :one
INSERT INTO models (name, description, metadata, labels, notes, workspace_id, user_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id;

-- name: UpdateModel :exec
UPDATE models SET name = $2, description = $3, metadata = $4, labels = $5, notes = $6, updated_at = now()
WHERE id = $1;

-- name: SetModelArchived :exec
UPDATE models SET archived = $2, updated_at = now() WHERE id = $1;

-- name: MoveModel :exec
UPDATE models SET workspace_id = $2, updated_at = now() WHERE id = $1;

-- name: DeleteModel :exec
DELETE FROM models WHERE id = $1;

-- name: ListModelVersions :many
SELECT * FROM model_version_views WHERE model_id = $1 ORDER BY version DESC;

-- name: GetModelVersion :one
SELECT * FROM model_version_views WHERE model_id = $1 AND version = $2;

-- name: LatestModelVersion :one
SELECT * FROM model_version_views WHERE model_id = $1 ORDER BY version DESC LIMIT 1;

-- name: ModelVersionByAlias :one
SELECT v.* FROM model_version_views v JOIN model_aliases a ON a.version_id = v.id
WHERE a.model_id = $1 AND a.alias = $2;

-- name: CreateModelVersion :one
-- The next number: one more than the highest, under the model's row lock.
INSERT INTO model_versions (model_id, version, checkpoint_uuid, name, comment, notes, metadata, labels, user_id)
VALUES ($1, (SELECT COALESCE(max(version), 0) + 1 FROM model_versions WHERE model_id = $1), $2, $3, $4, $5, $6, $7, $8)
RETURNING version;

-- name: LockModel :exec
SELECT id FROM models WHERE id = $1 FOR UPDATE;

-- name: UpdateModelVersion :exec
UPDATE model_versions SET name = $2, comment = $3, notes = $4, metadata = $5, labels = $6, updated_at = now()
WHERE id = $1;

-- name: DeleteModelVersion :exec
DELETE FROM model_versions WHERE id = $1;

-- name: SetModelAlias :exec
INSERT INTO model_aliases (model_id, alias, version_id) VALUES ($1, $2, $3)
ON CONFLICT (model_id, alias) DO UPDATE SET version_id = EXCLUDED.version_id;

-- name: DeleteModelAlias :execrows
DELETE FROM model_aliases WHERE model_id = $1 AND alias = $2;

-- name: RegisteredCheckpoints :many
-- Which of these checkpoints are model versions, and where.
SELECT v.checkpoint_uuid, m.name AS model_name, v.version
FROM model_versions v JOIN models m ON m.id = v.model_id
WHERE v.checkpoint_uuid = ANY(sqlc.arg(uuids)::uuid[]);

-- name: LockModelByName :one
SELECT id FROM models WHERE name = $1 FOR UPDATE;
