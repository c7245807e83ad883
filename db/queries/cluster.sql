-- name: GetClusterID :one
SELECT cluster_id FROM cluster;

-- name: CreateClusterID :exec
INSERT INTO cluster (cluster_id) VALUES ($1) ON CONFLICT DO NOTHING;
