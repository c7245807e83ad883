-- +goose Up
-- The experiments and trials a TensorBoard shows (Determined's
-- LaunchTensorboardRequest experimentIds and trialIds). Arrays, not foreign
-- keys: an experiment deleted later makes the TensorBoard fail at launch with
-- its id, as Determined does.
ALTER TABLE tasks
    ADD COLUMN experiment_ids bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN trial_ids      bigint[] NOT NULL DEFAULT '{}';

CREATE OR REPLACE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username, t.experiment_ids, t.trial_ids
FROM tasks t JOIN users u ON u.id = t.user_id;

-- +goose Down
DROP VIEW task_views;
CREATE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username
FROM tasks t JOIN users u ON u.id = t.user_id;
ALTER TABLE tasks DROP COLUMN experiment_ids, DROP COLUMN trial_ids;
