-- +goose Up
-- Live updates per object: besides its table's name (the collection topic,
-- e.g. experiments, that list pages show), a statement that changes a row
-- a page shows notifies one topic per object it changed, e.g. trial:27,
-- experiment:3, task:notebook-4, queue:default, logs:trial-27. The triggers
-- stay per statement: the changed rows come as a transition table, so a
-- bulk insert of many trials' metrics notifies once per trial, not once per
-- row, and PostgreSQL folds identical notifications of one transaction into
-- one, delivered at commit. Each trigger names its topics in pairs of
-- arguments: the topic's kind and the SQL expression (over a changed row)
-- of its id; a NULL id notifies nothing.

-- +goose StatementBegin
CREATE FUNCTION notify_objects() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    i int := 0;
BEGIN
    PERFORM pg_notify('resolute_changes', TG_TABLE_NAME);
    WHILE i < TG_NARGS LOOP
        EXECUTE format('SELECT count(pg_notify(''resolute_changes'', %L || o)) FROM '
            || '(SELECT DISTINCT (%s)::text AS o FROM changed) d WHERE o IS NOT NULL',
            TG_ARGV[i] || ':', TG_ARGV[i + 1]);
        i := i + 2;
    END LOOP;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP TRIGGER experiments_notify ON experiments;
DROP TRIGGER trials_notify ON trials;
DROP TRIGGER allocations_notify ON allocations;
DROP TRIGGER metrics_notify ON metrics;
DROP TRIGGER checkpoints_notify ON checkpoints;
DROP TRIGGER task_logs_notify ON task_logs;
DROP TRIGGER tasks_notify ON tasks;

-- Transition tables need a trigger per event.
CREATE TRIGGER experiments_insert_notify AFTER INSERT ON experiments REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('experiment', 'id', 'queue', 'resource_pool');
CREATE TRIGGER experiments_update_notify AFTER UPDATE ON experiments REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('experiment', 'id', 'queue', 'resource_pool');
CREATE TRIGGER experiments_delete_notify AFTER DELETE ON experiments REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('experiment', 'id', 'queue', 'resource_pool');

CREATE TRIGGER trials_insert_notify AFTER INSERT ON trials REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'id', 'experiment', 'experiment_id');
CREATE TRIGGER trials_update_notify AFTER UPDATE ON trials REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'id', 'experiment', 'experiment_id');
CREATE TRIGGER trials_delete_notify AFTER DELETE ON trials REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'id', 'experiment', 'experiment_id');

-- A metrics insert changes its trial's charts and tables, and its
-- experiment's.
CREATE TRIGGER metrics_insert_notify AFTER INSERT ON metrics REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id',
        'experiment', '(SELECT t.experiment_id FROM trials t WHERE t.id = trial_id)');
CREATE TRIGGER metrics_update_notify AFTER UPDATE ON metrics REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id',
        'experiment', '(SELECT t.experiment_id FROM trials t WHERE t.id = trial_id)');
CREATE TRIGGER metrics_delete_notify AFTER DELETE ON metrics REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id');

CREATE TRIGGER checkpoints_insert_notify AFTER INSERT ON checkpoints REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id', 'experiment', 'experiment_id');
CREATE TRIGGER checkpoints_update_notify AFTER UPDATE ON checkpoints REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id', 'experiment', 'experiment_id');
CREATE TRIGGER checkpoints_delete_notify AFTER DELETE ON checkpoints REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id', 'experiment', 'experiment_id');

-- An allocation is its task's and trial's, and takes slots of a pool (its
-- task's, or its trial's experiment's).
CREATE TRIGGER allocations_insert_notify AFTER INSERT ON allocations REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'task_id', 'trial', 'trial_id', 'queue',
        'COALESCE((SELECT k.resource_pool FROM tasks k WHERE k.id = task_id), (SELECT e.resource_pool FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE t.id = trial_id))');
CREATE TRIGGER allocations_update_notify AFTER UPDATE ON allocations REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'task_id', 'trial', 'trial_id', 'queue',
        'COALESCE((SELECT k.resource_pool FROM tasks k WHERE k.id = task_id), (SELECT e.resource_pool FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE t.id = trial_id))');
CREATE TRIGGER allocations_delete_notify AFTER DELETE ON allocations REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'task_id', 'trial', 'trial_id');

CREATE TRIGGER tasks_insert_notify AFTER INSERT ON tasks REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'id', 'queue', 'resource_pool');
CREATE TRIGGER tasks_update_notify AFTER UPDATE ON tasks REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'id', 'queue', 'resource_pool');
CREATE TRIGGER tasks_delete_notify AFTER DELETE ON tasks REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('task', 'id', 'queue', 'resource_pool');

-- Log lines are their task's (logs:trial-27), and a trial's also its
-- experiment's (experiment-logs:3): the log followers, not the pages'
-- regions.
CREATE TRIGGER task_logs_insert_notify AFTER INSERT ON task_logs REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('logs', 'task_id', 'experiment-logs',
        'CASE WHEN task_id ~ ''^trial-[0-9]+$'' THEN (SELECT t.experiment_id FROM trials t WHERE t.id = substr(task_id, 7)::bigint) END');
CREATE TRIGGER task_logs_delete_notify AFTER DELETE ON task_logs REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('logs', 'task_id');

-- +goose Down
DROP TRIGGER task_logs_delete_notify ON task_logs;
DROP TRIGGER task_logs_insert_notify ON task_logs;
DROP TRIGGER tasks_delete_notify ON tasks;
DROP TRIGGER tasks_update_notify ON tasks;
DROP TRIGGER tasks_insert_notify ON tasks;
DROP TRIGGER allocations_delete_notify ON allocations;
DROP TRIGGER allocations_update_notify ON allocations;
DROP TRIGGER allocations_insert_notify ON allocations;
DROP TRIGGER checkpoints_delete_notify ON checkpoints;
DROP TRIGGER checkpoints_update_notify ON checkpoints;
DROP TRIGGER checkpoints_insert_notify ON checkpoints;
DROP TRIGGER metrics_delete_notify ON metrics;
DROP TRIGGER metrics_update_notify ON metrics;
DROP TRIGGER metrics_insert_notify ON metrics;
DROP TRIGGER trials_delete_notify ON trials;
DROP TRIGGER trials_update_notify ON trials;
DROP TRIGGER trials_insert_notify ON trials;
DROP TRIGGER experiments_delete_notify ON experiments;
DROP TRIGGER experiments_update_notify ON experiments;
DROP TRIGGER experiments_insert_notify ON experiments;
DROP FUNCTION notify_objects();
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
