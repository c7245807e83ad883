-- name: CreateWebhook :one
INSERT INTO webhooks (name, url, webhook_type, mode, workspace_id)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: CreateWebhookTrigger :one
INSERT INTO webhook_triggers (webhook_id, trigger_type, condition)
VALUES ($1, $2, $3)
RETURNING *;

-- name: ListWebhooks :many
SELECT * FROM webhooks ORDER BY id;

-- name: GetWebhook :one
SELECT * FROM webhooks WHERE id = $1;

-- name: ListWebhookTriggers :many
SELECT * FROM webhook_triggers ORDER BY webhook_id, id;

-- name: DeleteWebhook :execrows
DELETE FROM webhooks WHERE id = $1;

-- name: SetWebhookURL :execrows
UPDATE webhooks SET url = $2 WHERE id = $1;

-- name: TakeWebhookEvents :many
-- The oldest events, removed from the outbox in the transaction that turns
-- them into deliveries.
DELETE FROM webhook_events WHERE id IN (
    SELECT id FROM webhook_events ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: CreateWebhookDelivery :exec
INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, url, payload, next_attempt_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: ClaimWebhookDeliveries :many
-- Due deliveries, claimed so that they are sent once at a time.
UPDATE webhook_deliveries SET claimed = true WHERE id IN (
    SELECT id FROM webhook_deliveries
    WHERE delivered_at IS NULL AND NOT failed AND NOT claimed AND next_attempt_at <= sqlc.arg(now)::timestamptz
    ORDER BY next_attempt_at, id LIMIT sqlc.arg(max) FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: ReleaseWebhookClaims :exec
UPDATE webhook_deliveries SET claimed = false WHERE claimed;

-- name: SetWebhookDelivered :exec
UPDATE webhook_deliveries SET claimed = false, attempts = attempts + 1, delivered_at = $2, last_error = ''
WHERE id = $1;

-- name: SetWebhookAttemptFailed :exec
UPDATE webhook_deliveries SET claimed = false, attempts = attempts + 1, last_error = $2,
    next_attempt_at = $3, failed = $4
WHERE id = $1;

-- name: UnclaimWebhookDelivery :exec
UPDATE webhook_deliveries SET claimed = false WHERE id = $1;

-- name: ListWebhookDeliveries :many
SELECT * FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2;

-- name: WebhookSigningKey :one
SELECT webhook_signing_key FROM cluster;

-- name: ExperimentForWebhook :one
-- What an experiment's webhook payload says of it.
SELECT e.id, e.name, e.state, e.config, e.created_at, e.ended_at, p.id AS project_id, p.name AS project_name,
       w.id AS workspace_id, w.name AS workspace_name
FROM experiments e
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id
WHERE e.id = $1;

-- name: TaskForWebhook :one
SELECT t.id, t.type, t.state, t.description, t.resource_pool, t.slots, t.created_at, t.ended_at,
       p.id AS project_id, p.name AS project_name, w.id AS workspace_id, w.name AS workspace_name
FROM tasks t
JOIN projects p ON p.id = t.project_id
JOIN workspaces w ON w.id = p.workspace_id
WHERE t.id = $1;
