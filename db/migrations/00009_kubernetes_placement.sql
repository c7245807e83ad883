-- +goose Up
-- Where an allocation's slots are: the agent (a Kubernetes node, or "local")
-- of each entry of slot_ids, so the scheduler can count a node's slots after
-- a restart. Empty for allocations of the local resource manager made before.
ALTER TABLE allocations ADD COLUMN slot_agents text[] NOT NULL DEFAULT '{}';

-- The host a task's service listens on (a pod IP on Kubernetes); NULL means
-- the master's own loopback, as on the local resource manager.
ALTER TABLE tasks ADD COLUMN service_host text;

CREATE OR REPLACE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username, t.experiment_ids, t.trial_ids, t.service_host
FROM tasks t JOIN users u ON u.id = t.user_id;

-- +goose Down
DROP VIEW task_views;
CREATE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username, t.experiment_ids, t.trial_ids
FROM tasks t JOIN users u ON u.id = t.user_id;
ALTER TABLE tasks DROP COLUMN service_host;
ALTER TABLE allocations DROP COLUMN slot_agents;
