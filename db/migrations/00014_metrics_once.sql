-- +goose Up
-- Metrics are stored exactly once: a report is unique by trial, run, group
-- and step, so a retried POST (the harness retries on timeouts) is dropped.
-- Duplicates stored before go first, keeping the first of each.
DELETE FROM metrics a USING metrics b
WHERE a.trial_id = b.trial_id AND a.group_name = b.group_name AND a.steps_completed = b.steps_completed
  AND a.trial_run_id = b.trial_run_id AND a.id > b.id;
DROP INDEX metrics_trial_group;
CREATE UNIQUE INDEX metrics_once ON metrics (trial_id, group_name, steps_completed, trial_run_id);

-- hidden marks the reports of an earlier run past the checkpoint a later run
-- restarted from: they are kept but left out of series, the best validation
-- and the searcher, as Determined archives them. told_searcher marks the
-- validation reports the searcher has seen, so a retry does not tell it
-- twice; every report stored before was told.
ALTER TABLE metrics ADD COLUMN hidden boolean NOT NULL DEFAULT false,
    ADD COLUMN told_searcher boolean NOT NULL DEFAULT true;
ALTER TABLE metrics ALTER COLUMN told_searcher SET DEFAULT false;

-- Reports stored before: which checkpoint a run restarted from is not
-- recorded, so an earlier run's reports from the first step a later run
-- reported on are hidden.
UPDATE metrics m SET hidden = true
FROM (SELECT trial_id, trial_run_id, min(steps_completed) AS first_step FROM metrics GROUP BY trial_id, trial_run_id) later
WHERE later.trial_id = m.trial_id AND later.trial_run_id > m.trial_run_id AND m.steps_completed >= later.first_step;

-- +goose Down
ALTER TABLE metrics DROP COLUMN hidden, DROP COLUMN told_searcher;
DROP INDEX metrics_once;
CREATE INDEX metrics_trial_group ON metrics (trial_id, group_name, steps_completed);
