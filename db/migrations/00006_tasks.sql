-- +goose Up
-- Commands, notebooks, shells and TensorBoards: tasks that are not trials.
-- Each is a job of the queue with one allocation at a time.
CREATE TABLE tasks (
    id             text PRIMARY KEY, -- <type>-<n>, e.g. notebook-3
    type           text NOT NULL,    -- COMMAND, NOTEBOOK, SHELL, TENSORBOARD
    state          text NOT NULL,    -- QUEUED, RUNNING, TERMINATING, TERMINATED
    description    text NOT NULL DEFAULT '',
    config         jsonb NOT NULL,
    context        bytea NOT NULL DEFAULT '',
    user_id        bigint NOT NULL REFERENCES users (id),
    project_id     bigint NOT NULL REFERENCES projects (id),
    resource_pool  text NOT NULL,
    priority       int,
    weight         double precision NOT NULL DEFAULT 1,
    queue_position double precision NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000000),
    slots          int NOT NULL,
    service_port   int,              -- where the task's web service listens
    service_token  text NOT NULL DEFAULT '', -- e.g. the notebook's token
    ready          boolean NOT NULL DEFAULT false,
    exit_code      int,
    end_reason     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    ended_at       timestamptz
);
CREATE SEQUENCE task_numbers;
CREATE INDEX tasks_live ON tasks (state) WHERE state <> 'TERMINATED';

CREATE VIEW task_views AS
SELECT t.id, t.type, t.state, t.description, t.config, t.user_id, t.project_id, t.resource_pool, t.priority,
       t.weight, t.queue_position, t.slots, t.service_port, t.service_token, t.ready, t.exit_code, t.end_reason,
       t.created_at, t.ended_at, u.username
FROM tasks t JOIN users u ON u.id = t.user_id;

-- +goose Down
DROP VIEW task_views;
DROP SEQUENCE task_numbers;
DROP TABLE tasks;
