-- +goose Up
-- Agents (machines, Kubernetes nodes) an administrator disabled with
-- det agent disable: the scheduler places nothing new on their free slots.
-- An agent without a row is enabled; enabling it deletes its row. Draining
-- says its running allocations were left to finish; without it they were
-- asked to give the agent back (trials checkpoint and move, tasks end).
CREATE TABLE agent_states (
    agent_id    text PRIMARY KEY,
    draining    boolean NOT NULL,
    disabled_by bigint REFERENCES users (id) ON DELETE SET NULL,
    disabled_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE agent_states;
