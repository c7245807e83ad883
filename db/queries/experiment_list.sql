-- The experiment list: one page of experiments under a filter, in any
-- column's order, and how many match; and per workspace and project, how
-- many experiments there are and when they last did something.

-- name: ListExperimentPage :many
SELECT e.id, e.name, e.description, e.labels, e.state, e.archived, e.progress, e.best_validation,
       e.searcher_name, e.searcher_metric, e.smaller_is_better, e.resource_pool, e.created_at, e.ended_at,
       e.project_id, e.user_id, u.username, p.name AS project_name, p.workspace_id, w.name AS workspace_name,
       e.num_trials
FROM experiments e
JOIN users u ON u.id = e.user_id
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id
WHERE (sqlc.narg(project_id)::bigint IS NULL OR e.project_id = sqlc.narg(project_id))
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR p.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(archived)::boolean IS NULL OR e.archived = sqlc.narg(archived))
  AND (cardinality(sqlc.arg(states)::text[]) = 0 OR e.state = ANY(sqlc.arg(states)::text[]))
  AND (sqlc.narg(username)::text IS NULL OR u.username = sqlc.narg(username))
  AND (sqlc.narg(label)::text IS NULL OR e.labels @> ARRAY[sqlc.narg(label)::text])
  AND (sqlc.narg(pattern)::text IS NULL OR e.name ILIKE sqlc.narg(pattern) OR e.description ILIKE sqlc.narg(pattern))
  -- Under RBAC, only the workspaces where the viewer holds a role that
  -- reads experiments (authz.Visible): a semi-join on their assignments
  -- and their groups'.
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR p.workspace_id IN (SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id)))))
ORDER BY
  CASE WHEN sqlc.arg(sort)::text = 'name' AND NOT sqlc.arg(descending)::boolean THEN e.name END,
  CASE WHEN sqlc.arg(sort)::text = 'name' AND sqlc.arg(descending)::boolean THEN e.name END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'state' AND NOT sqlc.arg(descending)::boolean THEN e.state END,
  CASE WHEN sqlc.arg(sort)::text = 'state' AND sqlc.arg(descending)::boolean THEN e.state END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'progress' AND NOT sqlc.arg(descending)::boolean THEN e.progress END,
  CASE WHEN sqlc.arg(sort)::text = 'progress' AND sqlc.arg(descending)::boolean THEN e.progress END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'best' AND NOT sqlc.arg(descending)::boolean THEN e.best_validation END NULLS LAST,
  CASE WHEN sqlc.arg(sort)::text = 'best' AND sqlc.arg(descending)::boolean THEN e.best_validation END DESC NULLS LAST,
  CASE WHEN sqlc.arg(sort)::text = 'searcher' AND NOT sqlc.arg(descending)::boolean THEN e.searcher_name END,
  CASE WHEN sqlc.arg(sort)::text = 'searcher' AND sqlc.arg(descending)::boolean THEN e.searcher_name END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'trials' AND NOT sqlc.arg(descending)::boolean THEN e.num_trials END,
  CASE WHEN sqlc.arg(sort)::text = 'trials' AND sqlc.arg(descending)::boolean THEN e.num_trials END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'user' AND NOT sqlc.arg(descending)::boolean THEN u.username END,
  CASE WHEN sqlc.arg(sort)::text = 'user' AND sqlc.arg(descending)::boolean THEN u.username END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'start' AND NOT sqlc.arg(descending)::boolean THEN e.created_at END,
  CASE WHEN sqlc.arg(sort)::text = 'start' AND sqlc.arg(descending)::boolean THEN e.created_at END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'duration' AND NOT sqlc.arg(descending)::boolean
       THEN coalesce(e.ended_at, now()) - e.created_at END,
  CASE WHEN sqlc.arg(sort)::text = 'duration' AND sqlc.arg(descending)::boolean
       THEN coalesce(e.ended_at, now()) - e.created_at END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'labels' AND NOT sqlc.arg(descending)::boolean THEN e.labels END,
  CASE WHEN sqlc.arg(sort)::text = 'labels' AND sqlc.arg(descending)::boolean THEN e.labels END DESC,
  CASE WHEN sqlc.arg(sort)::text = 'pool' AND NOT sqlc.arg(descending)::boolean THEN e.resource_pool END,
  CASE WHEN sqlc.arg(sort)::text = 'pool' AND sqlc.arg(descending)::boolean THEN e.resource_pool END DESC,
  -- Ties go the column's way, so a (column, id) index gives the whole order.
  CASE WHEN sqlc.arg(descending)::boolean THEN e.id END DESC,
  e.id
LIMIT sqlc.arg(lim) OFFSET sqlc.arg(off);

-- name: CountExperimentPage :one
-- How many experiments ListExperimentPage's filter matches: the same filter
-- on the experiments table alone.
SELECT count(*)::int
FROM experiments e
WHERE (sqlc.narg(project_id)::bigint IS NULL OR e.project_id = sqlc.narg(project_id))
  AND (sqlc.narg(workspace_id)::bigint IS NULL
       OR e.project_id IN (SELECT p.id FROM projects p WHERE p.workspace_id = sqlc.narg(workspace_id)))
  AND (sqlc.narg(archived)::boolean IS NULL OR e.archived = sqlc.narg(archived))
  AND (cardinality(sqlc.arg(states)::text[]) = 0 OR e.state = ANY(sqlc.arg(states)::text[]))
  AND (sqlc.narg(username)::text IS NULL OR e.user_id = (SELECT u.id FROM users u WHERE u.username = sqlc.narg(username)))
  AND (sqlc.narg(label)::text IS NULL OR e.labels @> ARRAY[sqlc.narg(label)::text])
  AND (sqlc.narg(pattern)::text IS NULL OR e.name ILIKE sqlc.narg(pattern) OR e.description ILIKE sqlc.narg(pattern))
  AND (sqlc.narg(viewer_id)::bigint IS NULL OR e.project_id IN (SELECT p.id FROM projects p WHERE p.workspace_id IN (
       SELECT ra.workspace_id FROM role_assignments ra
       WHERE ra.role = ANY(sqlc.arg(viewer_roles)::text[]) AND (ra.user_id = sqlc.narg(viewer_id)
         OR ra.group_id IN (SELECT gm.group_id FROM user_group_members gm WHERE gm.user_id = sqlc.narg(viewer_id))))));

-- name: ListExperimentLabels :many
-- Every label in use, for the list's label filter.
SELECT DISTINCT unnest(labels)::text AS label FROM experiments ORDER BY label;

-- name: ListProjectActivity :many
-- Per project: its experiments, those active, and the last time one of
-- them started or ended (the epoch when none did).
SELECT p.id AS project_id, p.workspace_id,
       count(e.id)::int AS num_experiments,
       (count(e.id) FILTER (WHERE e.state = 'ACTIVE'))::int AS num_active,
       coalesce(max(greatest(e.created_at, e.ended_at)), 'epoch')::timestamptz AS last_activity
FROM projects p
LEFT JOIN experiments e ON e.project_id = p.id
GROUP BY p.id, p.workspace_id;
