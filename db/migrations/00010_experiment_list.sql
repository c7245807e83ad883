-- +goose Up
-- The experiment list filters and sorts thousands of experiments by any
-- column. What it needs is kept on the experiment row, so a list never
-- reads configs or counts trials row by row: the searcher's name, metric
-- and direction as generated columns, and the number of trials, kept by
-- statement triggers on trials.
ALTER TABLE experiments
    ADD COLUMN searcher_name text GENERATED ALWAYS AS (config->'searcher'->>'name') STORED,
    ADD COLUMN searcher_metric text GENERATED ALWAYS AS (config->'searcher'->>'metric') STORED,
    ADD COLUMN smaller_is_better boolean GENERATED ALWAYS AS
        (coalesce((config->'searcher'->>'smaller_is_better')::boolean, true)) STORED,
    ADD COLUMN num_trials int NOT NULL DEFAULT 0;
UPDATE experiments e SET num_trials = (SELECT count(*) FROM trials t WHERE t.experiment_id = e.id);

-- +goose StatementBegin
CREATE FUNCTION count_added_trials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE experiments e SET num_trials = e.num_trials + a.n
    FROM (SELECT experiment_id, count(*)::int AS n FROM added GROUP BY experiment_id) a
    WHERE e.id = a.experiment_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION count_removed_trials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- An experiment deleted with its trials is already gone: nothing to update.
    UPDATE experiments e SET num_trials = e.num_trials - r.n
    FROM (SELECT experiment_id, count(*)::int AS n FROM removed GROUP BY experiment_id) r
    WHERE e.id = r.experiment_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER trials_added AFTER INSERT ON trials
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_added_trials();
CREATE TRIGGER trials_removed AFTER DELETE ON trials
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_removed_trials();

-- A page of the list in any order reads its 50 rows from an index, not the
-- whole (wide) table: (column, id), as ties go the column's way. The
-- duration depends on the clock and the user is a join: those two sort the
-- filtered rows.
CREATE INDEX experiments_created ON experiments (created_at, id);
CREATE INDEX experiments_name ON experiments (name, id);
CREATE INDEX experiments_state_order ON experiments (state, id);
CREATE INDEX experiments_progress ON experiments (progress, id);
CREATE INDEX experiments_best ON experiments (best_validation, id);
CREATE INDEX experiments_best_desc ON experiments (best_validation DESC NULLS LAST, id DESC);
CREATE INDEX experiments_searcher ON experiments (searcher_name, id);
CREATE INDEX experiments_num_trials ON experiments (num_trials, id);
CREATE INDEX experiments_label_order ON experiments (labels, id);
CREATE INDEX experiments_pool_order ON experiments (resource_pool, id);
CREATE INDEX experiments_user ON experiments (user_id, id);
-- The label filter.
CREATE INDEX experiments_labels ON experiments USING gin (labels);
-- Counts of a filter, and each project's activity, from the index alone.
CREATE INDEX experiments_listing ON experiments (archived, state, user_id, project_id);
CREATE INDEX experiments_activity ON experiments (project_id) INCLUDE (state, created_at, ended_at);

-- Pages of one experiment read its trial count from the row too.
CREATE OR REPLACE VIEW experiment_views AS
SELECT e.id, e.project_id, e.user_id, e.name, e.description, e.labels, e.notes, e.state, e.archived,
       e.config, e.template, e.parent_id, e.seed, e.restarts, e.progress, e.best_validation,
       e.priority, e.weight, e.max_slots, e.searcher_done, e.created_at, e.ended_at,
       u.username, p.name AS project_name, p.workspace_id, w.name AS workspace_name,
       e.num_trials,
       e.resource_pool, e.queue_position
FROM experiments e
JOIN users u ON u.id = e.user_id
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id;

-- +goose Down
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
DROP INDEX experiments_activity;
DROP INDEX experiments_listing;
DROP INDEX experiments_labels;
DROP INDEX experiments_user;
DROP INDEX experiments_pool_order;
DROP INDEX experiments_label_order;
DROP INDEX experiments_num_trials;
DROP INDEX experiments_searcher;
DROP INDEX experiments_best_desc;
DROP INDEX experiments_best;
DROP INDEX experiments_progress;
DROP INDEX experiments_state_order;
DROP INDEX experiments_name;
DROP INDEX experiments_created;
DROP TRIGGER trials_removed ON trials;
DROP TRIGGER trials_added ON trials;
DROP FUNCTION count_removed_trials();
DROP FUNCTION count_added_trials();
ALTER TABLE experiments DROP COLUMN num_trials, DROP COLUMN smaller_is_better, DROP COLUMN searcher_metric,
    DROP COLUMN searcher_name;

