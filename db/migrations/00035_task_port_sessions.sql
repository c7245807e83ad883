-- +goose Up
-- A ticket and a task session may be for one of a task's HTTP proxy ports
-- (environment.proxy_ports with proxy_tcp: false), served on the task
-- origin at /proxy/<task id>:<port>/; port 0 is the task's own service.
-- A session for one port opens no other, nor the task's own service.
ALTER TABLE task_tickets ADD COLUMN port integer NOT NULL DEFAULT 0;
ALTER TABLE task_sessions ADD COLUMN port integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE task_sessions DROP COLUMN port;
ALTER TABLE task_tickets DROP COLUMN port;
