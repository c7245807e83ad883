-- +goose Up
-- A task's workspace (its project's), which RBAC reads: a task is seen and
-- changed by those who hold a role there.
CREATE OR REPLACE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username, t.experiment_ids, t.trial_ids, t.service_host, p.workspace_id
FROM tasks t JOIN users u ON u.id = t.user_id JOIN projects p ON p.id = t.project_id;

-- +goose Down
DROP VIEW task_views;
CREATE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username, t.experiment_ids, t.trial_ids, t.service_host
FROM tasks t JOIN users u ON u.id = t.user_id;
