-- name: InsertSystemMetrics :execrows
-- One agent's averages of one group; a report already stored (a retried
-- POST) is dropped.
INSERT INTO system_metrics (trial_id, trial_run_id, group_name, agent_id, reported_at, metrics)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (trial_id, group_name, reported_at, agent_id, trial_run_id) DO NOTHING;

-- name: ListTrialSystemMetrics :many
-- A trial's reports of one group, every run's, in time order.
SELECT * FROM system_metrics WHERE trial_id = $1 AND group_name = $2 ORDER BY reported_at, id;

-- name: ListTrialSystemMetricGroups :many
-- The groups of system metrics a trial reported.
SELECT DISTINCT group_name FROM system_metrics WHERE trial_id = $1 ORDER BY group_name;

-- name: ListRunningTrialSystemMetrics :many
-- The latest report of each group and agent of every trial running now, of
-- its current run and of the last ten minutes: what /metrics shows.
SELECT DISTINCT ON (s.trial_id, s.group_name, s.agent_id) s.*
FROM system_metrics s
JOIN trials t ON t.id = s.trial_id AND s.trial_run_id = t.run_id
WHERE s.trial_id IN (SELECT a.trial_id FROM allocations a WHERE a.state = 'RUNNING' AND a.trial_id IS NOT NULL)
  AND s.reported_at > now() - interval '10 minutes'
ORDER BY s.trial_id, s.group_name, s.agent_id, s.reported_at DESC;
