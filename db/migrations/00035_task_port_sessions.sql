-- +goose Up
-- A ticket and a task session may be for one of a task's HTTP proxy ports
-- (environment.proxy_ports with proxy_tcp: false), served on the task
-- origin at /proxy/<task id>:<port>/; port 0 is the task's own service.
-- A session for one port opens no other, nor the task's own service.
ALTER TABLE task_tickets ADD COLUMN port integer NOT NULL DEFAULT 0;
ALTER TABLE task_sessions ADD COLUMN port integer NOT NULL DEFAULT 0;
-- A trial's ports are opened as trial-<id>, which has no row in tasks:
-- tickets and sessions name their task without a foreign key (they end
-- within a minute, or with the master session; a task gone is refused).
ALTER TABLE task_tickets DROP CONSTRAINT task_tickets_task_id_fkey;
ALTER TABLE task_sessions DROP CONSTRAINT task_sessions_task_id_fkey;

-- +goose Down
DELETE FROM task_tickets WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.id = task_tickets.task_id);
DELETE FROM task_sessions WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.id = task_sessions.task_id);
ALTER TABLE task_sessions ADD CONSTRAINT task_sessions_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE;
ALTER TABLE task_tickets ADD CONSTRAINT task_tickets_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE;
ALTER TABLE task_sessions DROP COLUMN port;
ALTER TABLE task_tickets DROP COLUMN port;
