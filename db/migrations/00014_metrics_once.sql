-- +goose Up
-- Metrics are stored exactly once: a report is unique by trial, run, group
-- and step, and a later report at the same step merges into it (a retried
-- POST, as the harness sends on timeouts, changes nothing). Reports stored
-- before at one step merge into the first of them (a later value of the
-- same metric wins), then the others go.
UPDATE metrics keep SET metrics = jsonb_set(keep.metrics, '{avg_metrics}', merged.avg)
FROM (SELECT g.keep AS id, jsonb_object_agg(kv.key, kv.value ORDER BY m.id) AS avg
      FROM (SELECT trial_id, group_name, steps_completed, trial_run_id, min(id) AS keep FROM metrics
            GROUP BY trial_id, group_name, steps_completed, trial_run_id HAVING count(*) > 1) g
      JOIN metrics m USING (trial_id, group_name, steps_completed, trial_run_id)
      CROSS JOIN LATERAL jsonb_each(COALESCE(m.metrics->'avg_metrics', '{}')) kv
      GROUP BY g.keep) merged
WHERE keep.id = merged.id;
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
