-- +goose Up
-- The Unix user and group a user's tasks run as, when an administrator
-- linked one (Determined's agent_user_groups). A user without a row runs
-- tasks as task_uid_base + their id. A table of its own, so the users row
-- and every query of it stay as they are. uid and gid 0 are refused: tasks
-- never run as root.
CREATE TABLE agent_user_groups (
    user_id     bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    agent_uid   bigint NOT NULL CHECK (agent_uid BETWEEN 1 AND 4294967294),
    agent_gid   bigint NOT NULL CHECK (agent_gid BETWEEN 1 AND 4294967294),
    agent_user  text NOT NULL CHECK (agent_user <> ''),
    agent_group text NOT NULL CHECK (agent_group <> '')
);

-- +goose Down
DROP TABLE agent_user_groups;
