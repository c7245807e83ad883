-- name: GetRunMetadata :one
SELECT metadata FROM run_metadata WHERE trial_id = $1;

-- name: SetRunMetadata :one
INSERT INTO run_metadata (trial_id, metadata) VALUES ($1, $2)
ON CONFLICT (trial_id) DO UPDATE SET metadata = EXCLUDED.metadata
RETURNING metadata;
