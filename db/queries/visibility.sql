-- What the objects that live topics and slots name belong to, for RBAC's filters
-- of /events, the cluster page and the agents (control/visibility.go).

-- name: TopicWorkspaces :many
SELECT 'experiment'::text AS kind, e.id::text AS id, p.workspace_id, ''::text AS task_type
FROM experiments e JOIN projects p ON p.id = e.project_id
WHERE e.id = ANY(@experiment_ids::bigint[])
UNION ALL
SELECT 'trial'::text, t.id::text, p.workspace_id, ''::text
FROM trials t JOIN experiments e ON e.id = t.experiment_id JOIN projects p ON p.id = e.project_id
WHERE t.id = ANY(@trial_ids::bigint[])
UNION ALL
SELECT 'task'::text, k.id, p.workspace_id, k.type
FROM tasks k JOIN projects p ON p.id = k.project_id
WHERE k.id = ANY(@task_ids::text[]);
