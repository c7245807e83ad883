-- name: SetTrialLogPolicyMatched :exec
-- A trial's log line matched a policy: its name is shown on the trial;
-- cancel_retries stops its restarts, exclude_node adds agents to avoid.
UPDATE trials SET log_policy_matched = $2,
    cancel_retries = cancel_retries OR sqlc.arg(cancel_retries)::boolean,
    excluded_agents = ARRAY(SELECT DISTINCT unnest(excluded_agents || sqlc.arg(agents)::text[]) ORDER BY 1)
WHERE id = $1;

-- name: SetExperimentLogRetention :exec
UPDATE experiments SET log_retention_days = $2 WHERE id = $1;

-- name: ExperimentLogRetention :one
SELECT log_retention_days FROM experiments WHERE id = $1;

-- name: DeleteExpiredTaskLogs :execrows
-- Log lines older than their retention at sqlc.arg(now): an experiment's
-- own number of days when it has one (-1: never), the master's default
-- otherwise (a negative default keeps everything else).
-- An experiment's own number is the one set on it (det experiment set
-- log-retention), else its config's retention_policy.log_retention_days.
WITH own AS (
    SELECT task_id, days FROM (
        SELECT 'trial-' || t.id::text AS task_id,
               COALESCE(e.log_retention_days, (e.config #>> '{retention_policy,log_retention_days}')::int) AS days
        FROM trials t JOIN experiments e ON e.id = t.experiment_id) d
    WHERE days IS NOT NULL
)
DELETE FROM task_logs WHERE id IN (
    SELECT l.id FROM task_logs l JOIN own o ON o.task_id = l.task_id
    WHERE o.days >= 0 AND l.time < sqlc.arg(now)::timestamptz - make_interval(days => o.days)
    UNION ALL
    SELECT l.id FROM task_logs l
    WHERE sqlc.arg(default_days)::int >= 0
      AND l.time < sqlc.arg(now)::timestamptz - make_interval(days => sqlc.arg(default_days)::int)
      AND NOT EXISTS (SELECT 1 FROM own o WHERE o.task_id = l.task_id));
