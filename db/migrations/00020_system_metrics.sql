-- +goose Up
-- System metrics a trial's profiler samples (core_context.profiler, or
-- profiling.enabled in its config): per report, one group (cpu, memory,
-- disk, network, gpu) of one agent's averages at a time. Kept apart from
-- metrics, whose rows are one per trial, group, step and run: these are
-- series in time, not in batches, and Determined keeps them apart too. A
-- retried POST (same trial, run, group, agent and report time) is stored
-- once.
CREATE TABLE system_metrics (
    id           bigserial PRIMARY KEY,
    trial_id     bigint NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
    trial_run_id int NOT NULL,
    group_name   text NOT NULL,
    agent_id     text NOT NULL,
    reported_at  timestamptz NOT NULL,
    metrics      jsonb NOT NULL CHECK (jsonb_typeof(metrics) = 'object')
);
CREATE UNIQUE INDEX system_metrics_once ON system_metrics (trial_id, group_name, reported_at, agent_id, trial_run_id);

-- A sample wakes the trial page's system charts (system-metrics:27), not
-- its whole live region, which would otherwise refresh every few seconds.
CREATE TRIGGER system_metrics_insert_notify AFTER INSERT ON system_metrics REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('system-metrics', 'trial_id');

-- Run metadata (core_context.train.set_metadata) is shown on its trial's
-- page: a set changes the trial's live region.
CREATE TRIGGER run_metadata_insert_notify AFTER INSERT ON run_metadata REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id');
CREATE TRIGGER run_metadata_update_notify AFTER UPDATE ON run_metadata REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_objects('trial', 'trial_id');

-- +goose Down
DROP TRIGGER run_metadata_update_notify ON run_metadata;
DROP TRIGGER run_metadata_insert_notify ON run_metadata;
DROP TABLE system_metrics;
