-- +goose Up
-- Slots an administrator disabled with det slot disable AGENT SLOT: the
-- scheduler places nothing new on them. A slot without a row is enabled;
-- enabling it deletes its row. slot_id is the slot's number on its agent as
-- Resolute numbers them (det slot list). Draining says the allocation
-- holding it was left to finish; without it, it was asked to leave.
CREATE TABLE slot_states (
    agent_id    text NOT NULL,
    slot_id     int NOT NULL,
    draining    boolean NOT NULL,
    disabled_by bigint REFERENCES users (id) ON DELETE SET NULL,
    disabled_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, slot_id)
);

-- Where each line of a task's output came from, as the resource manager
-- names it (Determined's agent_id and container_id): the agent (a machine,
-- a Kubernetes node) and the container (on the local resource manager the
-- allocation's process group, named by the allocation id; on Kubernetes
-- the pod). '' for the master's own lines and for lines stored before.
ALTER TABLE task_logs ADD COLUMN agent_id text NOT NULL DEFAULT '',
                      ADD COLUMN container_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE task_logs DROP COLUMN container_id, DROP COLUMN agent_id;
DROP TABLE slot_states;
