package db

import (
	"context"
	"encoding/json"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// Webhooks, their outbox and their deliveries (migration 00025), and what
// log policies and retention keep (00026).

// CreateWebhook stores a webhook and its triggers; w's enums are in the
// API's spelling.
func (q *Queries) CreateWebhook(ctx context.Context, w resolute.Webhook) (resolute.Webhook, error) {
	var ws *int64
	if w.WorkspaceID != 0 {
		ws = &w.WorkspaceID
	}
	row, err := q.q.CreateWebhook(ctx, gen.CreateWebhookParams{Name: w.Name, Url: w.URL,
		WebhookType: resolute.EnumValue("WEBHOOK_TYPE_", w.WebhookType), Mode: resolute.EnumValue("WEBHOOK_MODE_", w.Mode),
		WorkspaceID: ws})
	if err != nil {
		return w, translate(err, "webhook %q", w.Name)
	}
	out := toWebhook(row)
	for _, t := range w.Triggers {
		cond, err := json.Marshal(t.Condition)
		if err != nil {
			return out, err
		}
		tr, err := q.q.CreateWebhookTrigger(ctx, gen.CreateWebhookTriggerParams{WebhookID: row.ID,
			TriggerType: resolute.EnumValue("TRIGGER_TYPE_", t.TriggerType), Condition: cond})
		if err != nil {
			return out, translate(err, "trigger of webhook %q", w.Name)
		}
		out.Triggers = append(out.Triggers, toTrigger(tr))
	}
	return out, nil
}

// Webhooks lists every webhook with its triggers, oldest first.
func (q *Queries) Webhooks(ctx context.Context) ([]resolute.Webhook, error) {
	rows, err := q.q.ListWebhooks(ctx)
	if err != nil {
		return nil, translate(err, "webhooks")
	}
	triggers, err := q.q.ListWebhookTriggers(ctx)
	if err != nil {
		return nil, translate(err, "webhook triggers")
	}
	byID := map[int64][]resolute.Trigger{}
	for _, t := range triggers {
		byID[t.WebhookID] = append(byID[t.WebhookID], toTrigger(t))
	}
	out := make([]resolute.Webhook, len(rows))
	for i, r := range rows {
		out[i] = toWebhook(r)
		out[i].Triggers = byID[r.ID]
	}
	return out, nil
}

// Webhook returns one webhook with its triggers.
func (q *Queries) Webhook(ctx context.Context, id int64) (resolute.Webhook, error) {
	row, err := q.q.GetWebhook(ctx, id)
	if err != nil {
		return resolute.Webhook{}, translate(err, "webhook %d", id)
	}
	all, err := q.Webhooks(ctx)
	for _, w := range all {
		if w.ID == id {
			return w, err
		}
	}
	return toWebhook(row), err
}

// DeleteWebhook removes a webhook and its triggers; its past deliveries
// stay, unlinked.
func (q *Queries) DeleteWebhook(ctx context.Context, id int64) error {
	n, err := q.q.DeleteWebhook(ctx, id)
	if err == nil && n == 0 {
		return resolute.Errorf(resolute.ENotFound, "webhook %d not found", id)
	}
	return translate(err, "webhook %d", id)
}

// SetWebhookURL changes where a webhook is sent.
func (q *Queries) SetWebhookURL(ctx context.Context, id int64, url string) error {
	n, err := q.q.SetWebhookURL(ctx, gen.SetWebhookURLParams{ID: id, Url: url})
	if err == nil && n == 0 {
		return resolute.Errorf(resolute.ENotFound, "webhook %d not found", id)
	}
	return translate(err, "webhook %d", id)
}

func toWebhook(r gen.Webhook) resolute.Webhook {
	w := resolute.Webhook{ID: r.ID, Name: r.Name, URL: r.Url, WebhookType: resolute.EnumName("WEBHOOK_TYPE_", r.WebhookType),
		Mode: resolute.EnumName("WEBHOOK_MODE_", r.Mode), CreatedAt: r.CreatedAt, Triggers: []resolute.Trigger{}}
	if r.WorkspaceID != nil {
		w.WorkspaceID = *r.WorkspaceID
	}
	return w
}

func toTrigger(t gen.WebhookTrigger) resolute.Trigger {
	out := resolute.Trigger{ID: t.ID, WebhookID: t.WebhookID, TriggerType: resolute.EnumName("TRIGGER_TYPE_", t.TriggerType),
		Condition: map[string]any{}}
	json.Unmarshal(t.Condition, &out.Condition)
	return out
}

// WebhookEvent is a state change waiting in the outbox.
type WebhookEvent struct {
	ID         int64
	Kind       string // experiment or task
	ObjectID   string
	State      string
	OccurredAt time.Time
}

// TakeWebhookEvents removes up to n of the oldest events from the outbox;
// call it in the transaction that stores their deliveries.
func (q *Queries) TakeWebhookEvents(ctx context.Context, n int) ([]WebhookEvent, error) {
	rows, err := q.q.TakeWebhookEvents(ctx, int32(n))
	if err != nil {
		return nil, translate(err, "webhook events")
	}
	out := make([]WebhookEvent, len(rows))
	for i, r := range rows {
		out[i] = WebhookEvent(r)
	}
	return out, nil
}

// NewDelivery is a request to make to a webhook.
type NewDelivery struct {
	WebhookID int64
	EventID   string
	EventType string
	URL       string
	Payload   []byte
	Due       time.Time // when to make it
}

// CreateWebhookDelivery stores a request to make.
func (q *Queries) CreateWebhookDelivery(ctx context.Context, d NewDelivery) error {
	id := d.WebhookID
	return translate(q.q.CreateWebhookDelivery(ctx, gen.CreateWebhookDeliveryParams{WebhookID: &id, EventID: d.EventID,
		EventType: d.EventType, Url: d.URL, Payload: d.Payload, NextAttemptAt: d.Due}), "webhook delivery")
}

// Delivery is a claimed request to send.
type Delivery struct {
	ID       int64
	EventID  string
	URL      string
	Payload  []byte
	Attempts int // made before this one
}

// ClaimWebhookDeliveries claims up to n deliveries due at now.
func (q *Queries) ClaimWebhookDeliveries(ctx context.Context, now time.Time, n int) ([]Delivery, error) {
	rows, err := q.q.ClaimWebhookDeliveries(ctx, gen.ClaimWebhookDeliveriesParams{Now: now, Max: int32(n)})
	if err != nil {
		return nil, translate(err, "webhook deliveries")
	}
	out := make([]Delivery, len(rows))
	for i, r := range rows {
		out[i] = Delivery{ID: r.ID, EventID: r.EventID, URL: r.Url, Payload: r.Payload, Attempts: int(r.Attempts)}
	}
	return out, nil
}

// ReleaseWebhookClaims returns every claimed delivery to the pending ones:
// at start-up, those of a master that stopped while sending them.
func (q *Queries) ReleaseWebhookClaims(ctx context.Context) error {
	return translate(q.q.ReleaseWebhookClaims(ctx), "webhook deliveries")
}

// SetWebhookDelivered records that the receiver accepted a delivery.
func (q *Queries) SetWebhookDelivered(ctx context.Context, id int64, at time.Time) error {
	return translate(q.q.SetWebhookDelivered(ctx, gen.SetWebhookDeliveredParams{ID: id, DeliveredAt: &at}), "webhook delivery %d", id)
}

// SetWebhookAttemptFailed records a failed attempt: the next one is at
// next, or none when failed (out of attempts).
func (q *Queries) SetWebhookAttemptFailed(ctx context.Context, id int64, why string, next time.Time, failed bool) error {
	return translate(q.q.SetWebhookAttemptFailed(ctx, gen.SetWebhookAttemptFailedParams{ID: id, LastError: why,
		NextAttemptAt: next, Failed: failed}), "webhook delivery %d", id)
}

// UnclaimWebhookDelivery gives back a delivery not attempted (the master
// is stopping).
func (q *Queries) UnclaimWebhookDelivery(ctx context.Context, id int64) error {
	return translate(q.q.UnclaimWebhookDelivery(ctx, id), "webhook delivery %d", id)
}

// WebhookDeliveries lists a webhook's latest deliveries, newest first.
func (q *Queries) WebhookDeliveries(ctx context.Context, webhookID int64, limit int) ([]resolute.WebhookDelivery, error) {
	rows, err := q.q.ListWebhookDeliveries(ctx, gen.ListWebhookDeliveriesParams{WebhookID: &webhookID, Limit: int32(limit)})
	if err != nil {
		return nil, translate(err, "deliveries of webhook %d", webhookID)
	}
	out := make([]resolute.WebhookDelivery, len(rows))
	for i, r := range rows {
		out[i] = resolute.WebhookDelivery{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Attempts: int(r.Attempts),
			NextAttempt: r.NextAttemptAt, LastError: r.LastError, DeliveredAt: r.DeliveredAt, Failed: r.Failed,
			CreatedAt: r.CreatedAt, Payload: json.RawMessage(r.Payload)}
	}
	return out, nil
}

// WebhookSigningKey is the key made with the database, used when
// master.yaml gives none.
func (q *Queries) WebhookSigningKey(ctx context.Context) (string, error) {
	k, err := q.q.WebhookSigningKey(ctx)
	return k, translate(err, "webhook signing key")
}

// WebhookExperiment is what a webhook payload says of an experiment.
type WebhookExperiment = gen.ExperimentForWebhookRow

// ExperimentForWebhook loads what a payload says of an experiment.
func (q *Queries) ExperimentForWebhook(ctx context.Context, id int64) (WebhookExperiment, error) {
	e, err := q.q.ExperimentForWebhook(ctx, id)
	return e, translate(err, "experiment %d", id)
}

// WebhookTask is what a webhook payload says of a task.
type WebhookTask = gen.TaskForWebhookRow

// TaskForWebhook loads what a payload says of a task.
func (q *Queries) TaskForWebhook(ctx context.Context, id string) (WebhookTask, error) {
	t, err := q.q.TaskForWebhook(ctx, id)
	return t, translate(err, "task %s", id)
}

// SetTrialLogPolicyMatched records that a trial's log matched a policy:
// its name, and whether its retries are cancelled or agents excluded.
func (q *Queries) SetTrialLogPolicyMatched(ctx context.Context, trialID int64, name string, cancelRetries bool, excludeAgents []string) error {
	if excludeAgents == nil {
		excludeAgents = []string{}
	}
	return translate(q.q.SetTrialLogPolicyMatched(ctx, gen.SetTrialLogPolicyMatchedParams{ID: trialID, LogPolicyMatched: &name,
		CancelRetries: cancelRetries, Agents: excludeAgents}), "trial %d", trialID)
}

// SetExperimentLogRetention sets how many days an experiment's logs are
// kept (-1: for ever; nil: the master's default).
func (q *Queries) SetExperimentLogRetention(ctx context.Context, id int64, days *int) error {
	var d *int32
	if days != nil {
		v := int32(*days)
		d = &v
	}
	return translate(q.q.SetExperimentLogRetention(ctx, gen.SetExperimentLogRetentionParams{ID: id, LogRetentionDays: d}), "experiment %d", id)
}

// ExperimentLogRetention is an experiment's own number of days, nil when it
// follows the master's default.
func (q *Queries) ExperimentLogRetention(ctx context.Context, id int64) (*int, error) {
	d, err := q.q.ExperimentLogRetention(ctx, id)
	if err != nil || d == nil {
		return nil, translate(err, "experiment %d", id)
	}
	v := int(*d)
	return &v, nil
}

// DeleteExpiredTaskLogs deletes the log lines older than their retention at
// now (defaultDays for those of no experiment with its own; negative: never)
// and says how many went.
func (q *Queries) DeleteExpiredTaskLogs(ctx context.Context, now time.Time, defaultDays int) (int64, error) {
	n, err := q.q.DeleteExpiredTaskLogs(ctx, gen.DeleteExpiredTaskLogsParams{Now: now, DefaultDays: int32(defaultDays)})
	return n, translate(err, "task logs")
}
