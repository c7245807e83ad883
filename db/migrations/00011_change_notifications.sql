-- +goose Up
-- Live pages are pushed: every statement that changes a table a page shows
-- sends NOTIFY resolute_changes with the table's name as the payload, and
-- the master relays it to browsers as a server-sent event (package live).
-- The triggers are per statement, so a bulk insert of metrics or log lines
-- notifies once, and PostgreSQL folds identical notifications of one
-- transaction into one, delivered at commit.

-- +goose StatementBegin
CREATE FUNCTION notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('resolute_changes', TG_TABLE_NAME);
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER experiments_notify AFTER INSERT OR UPDATE OR DELETE ON experiments
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER trials_notify AFTER INSERT OR UPDATE OR DELETE ON trials
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER allocations_notify AFTER INSERT OR UPDATE OR DELETE ON allocations
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER metrics_notify AFTER INSERT OR UPDATE OR DELETE ON metrics
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER checkpoints_notify AFTER INSERT OR UPDATE OR DELETE ON checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER task_logs_notify AFTER INSERT OR UPDATE OR DELETE ON task_logs
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE OR DELETE ON tasks
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER models_notify AFTER INSERT OR UPDATE OR DELETE ON models
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER model_versions_notify AFTER INSERT OR UPDATE OR DELETE ON model_versions
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER workspaces_notify AFTER INSERT OR UPDATE OR DELETE ON workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
CREATE TRIGGER projects_notify AFTER INSERT OR UPDATE OR DELETE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION notify_change();

-- +goose Down
DROP TRIGGER projects_notify ON projects;
DROP TRIGGER workspaces_notify ON workspaces;
DROP TRIGGER model_versions_notify ON model_versions;
DROP TRIGGER models_notify ON models;
DROP TRIGGER tasks_notify ON tasks;
DROP TRIGGER task_logs_notify ON task_logs;
DROP TRIGGER checkpoints_notify ON checkpoints;
DROP TRIGGER metrics_notify ON metrics;
DROP TRIGGER allocations_notify ON allocations;
DROP TRIGGER trials_notify ON trials;
DROP TRIGGER experiments_notify ON experiments;
DROP FUNCTION notify_change();
