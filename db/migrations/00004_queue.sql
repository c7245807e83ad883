-- +goose Up
-- The job queue: which pool an experiment runs in and its place in that
-- pool's queue. Positions are numbers with room between them, so moving a
-- job ahead of another writes one row.
ALTER TABLE experiments ADD COLUMN resource_pool text NOT NULL DEFAULT 'default';
ALTER TABLE experiments ADD COLUMN queue_position double precision NOT NULL
    DEFAULT (extract(epoch FROM clock_timestamp()) * 1000000);
CREATE INDEX experiments_pool_position ON experiments (resource_pool, queue_position);

CREATE OR REPLACE VIEW experiment_views AS
SELECT e.id, e.project_id, e.user_id, e.name, e.description, e.labels, e.notes, e.state, e.archived,
       e.config, e.template, e.parent_id, e.seed, e.restarts, e.progress, e.best_validation,
       e.priority, e.weight, e.max_slots, e.searcher_done, e.created_at, e.ended_at,
       u.username, p.name AS project_name, p.workspace_id, w.name AS workspace_name,
       (SELECT count(*) FROM trials t WHERE t.experiment_id = e.id)::int AS num_trials,
       e.resource_pool, e.queue_position
FROM experiments e
JOIN users u ON u.id = e.user_id
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id;

-- +goose Down
DROP INDEX experiments_pool_position;
DROP VIEW experiment_views;
CREATE VIEW experiment_views AS
SELECT e.id, e.project_id, e.user_id, e.name, e.description, e.labels, e.notes, e.state, e.archived,
       e.config, e.template, e.parent_id, e.seed, e.restarts, e.progress, e.best_validation,
       e.priority, e.weight, e.max_slots, e.searcher_done, e.created_at, e.ended_at,
       u.username, p.name AS project_name, p.workspace_id, w.name AS workspace_name,
       (SELECT count(*) FROM trials t WHERE t.experiment_id = e.id)::int AS num_trials
FROM experiments e
JOIN users u ON u.id = e.user_id
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id;
ALTER TABLE experiments DROP COLUMN queue_position;
ALTER TABLE experiments DROP COLUMN resource_pool;
