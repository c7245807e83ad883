-- +goose Up
-- Log policies: what a trial's log lines matched. A cancel_retries policy
-- keeps a failed trial from being restarted; an exclude_node policy keeps
-- its next allocations off the agents where the line was logged.
ALTER TABLE trials
    ADD COLUMN log_policy_matched text, -- the name of the last policy matched
    ADD COLUMN cancel_retries     boolean NOT NULL DEFAULT false,
    ADD COLUMN excluded_agents    text[] NOT NULL DEFAULT '{}';

-- Log retention: an experiment's own number of days (-1 keeps its logs
-- for ever); NULL follows master.yaml's retention_policy.
ALTER TABLE experiments ADD COLUMN log_retention_days int
    CHECK (log_retention_days BETWEEN -1 AND 32767);

-- The retention cleanup deletes by time.
CREATE INDEX task_logs_time ON task_logs (time);

-- +goose Down
DROP INDEX task_logs_time;
ALTER TABLE experiments DROP COLUMN log_retention_days;
ALTER TABLE trials DROP COLUMN excluded_agents, DROP COLUMN cancel_retries, DROP COLUMN log_policy_matched;
