-- +goose Up
-- The task origin's credentials (handlers/proxy.go). A ticket is what the
-- master hands a browser to open one task on the task origin: it lives a
-- minute, is used once, and is bound to one task, one user and the master
-- session that asked for it. Redeemed on the task origin, it becomes a task
-- session: the task origin's cookie for that one task. Both end with the
-- master session they came from (logout, a password change and
-- deactivation delete sessions) and at their own expiry. Only the hashes
-- of their tokens are stored.
CREATE TABLE task_tickets (
    token_hash bytea PRIMARY KEY,
    task_id    text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       text NOT NULL DEFAULT '', -- where to go under /proxy/<task id>/
    expires_at timestamptz NOT NULL
);
CREATE INDEX task_tickets_expires_at ON task_tickets (expires_at);
CREATE INDEX task_tickets_session_id ON task_tickets (session_id);

CREATE TABLE task_sessions (
    token_hash bytea PRIMARY KEY,
    task_id    text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX task_sessions_expires_at ON task_sessions (expires_at);
CREATE INDEX task_sessions_session_id ON task_sessions (session_id);

-- +goose Down
DROP TABLE task_sessions;
DROP TABLE task_tickets;
