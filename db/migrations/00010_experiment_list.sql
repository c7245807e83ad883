-- +goose Up
-- The experiment list filters and sorts by the searcher's name and metric:
-- kept beside the config as generated columns, so a list of thousands never
-- reads the configs; and indexes for its common orders and filters.
ALTER TABLE experiments
    ADD COLUMN searcher_name text GENERATED ALWAYS AS (config->'searcher'->>'name') STORED,
    ADD COLUMN searcher_metric text GENERATED ALWAYS AS (config->'searcher'->>'metric') STORED,
    ADD COLUMN smaller_is_better boolean GENERATED ALWAYS AS
        (coalesce((config->'searcher'->>'smaller_is_better')::boolean, true)) STORED;
CREATE INDEX experiments_created ON experiments (created_at);
CREATE INDEX experiments_user ON experiments (user_id);
CREATE INDEX experiments_labels ON experiments USING gin (labels);

-- +goose Down
DROP INDEX experiments_labels;
DROP INDEX experiments_user;
DROP INDEX experiments_created;
ALTER TABLE experiments DROP COLUMN smaller_is_better, DROP COLUMN searcher_metric, DROP COLUMN searcher_name;
