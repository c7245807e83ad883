package resolute

import (
	"encoding/json"
	"strings"
	"time"
)

// Webhook types, modes and trigger types as Determined's API spells them
// (the database keeps them without the prefix).
const (
	WebhookTypeDefault = "WEBHOOK_TYPE_DEFAULT" // a JSON body, as Determined sends it
	WebhookTypeSlack   = "WEBHOOK_TYPE_SLACK"   // a Slack message (blocks)

	// WebhookModeWorkspace fires for every experiment of its workspace (of
	// all workspaces when it has none).
	WebhookModeWorkspace = "WEBHOOK_MODE_WORKSPACE"
	// WebhookModeSpecific fires only for experiments whose config names it
	// in integrations.webhooks.
	WebhookModeSpecific = "WEBHOOK_MODE_SPECIFIC"

	TriggerExperimentStateChange = "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE" // condition {"state": "COMPLETED"}
	TriggerTaskLog               = "TRIGGER_TYPE_TASK_LOG"                // condition {"regex": "..."}
	// TriggerTaskStateChange is Resolute's: a command, notebook, shell or
	// TensorBoard changed state (condition {"state": "TERMINATED"}).
	TriggerTaskStateChange = "TRIGGER_TYPE_TASK_STATE_CHANGE"
)

// Webhook is a URL called when something happens (GET /api/v1/webhooks).
type Webhook struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	URL         string    `json:"url"`
	WebhookType string    `json:"webhookType"`
	Mode        string    `json:"mode"`
	WorkspaceID int64     `json:"workspaceId"` // 0: every workspace
	Triggers    []Trigger `json:"triggers"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Trigger is what makes a webhook fire.
type Trigger struct {
	ID          int64          `json:"id"`
	TriggerType string         `json:"triggerType"`
	Condition   map[string]any `json:"condition"`
	WebhookID   int64          `json:"webhookId"`
}

// State is a state trigger's state ("" for other triggers).
func (t Trigger) State() string { s, _ := t.Condition["state"].(string); return s }

// Regex is a task log trigger's regular expression ("" for others).
func (t Trigger) Regex() string { s, _ := t.Condition["regex"].(string); return s }

// WebhookResponse wraps one webhook.
type WebhookResponse struct {
	Webhook Webhook `json:"webhook"`
}

// WebhooksResponse lists webhooks.
type WebhooksResponse struct {
	Webhooks []Webhook `json:"webhooks"`
}

// PatchWebhookRequest is the body of PATCH /api/v1/webhooks/{id}: the URL
// is all that can change, as in Determined.
type PatchWebhookRequest struct {
	URL string `json:"url"`
}

// WebhookDelivery is one request to a webhook and how it went.
type WebhookDelivery struct {
	ID          int64           `json:"id"`
	EventID     string          `json:"eventId"`
	EventType   string          `json:"eventType"`
	Attempts    int             `json:"attempts"`
	NextAttempt time.Time       `json:"nextAttemptAt"`
	LastError   string          `json:"lastError,omitempty"`
	DeliveredAt *time.Time      `json:"deliveredAt,omitempty"`
	Failed      bool            `json:"failed"`
	CreatedAt   time.Time       `json:"createdAt"`
	Payload     json.RawMessage `json:"payload"`
}

// WebhookDeliveriesResponse lists a webhook's latest deliveries.
type WebhookDeliveriesResponse struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// EnumName returns the API spelling of a stored value: prefix + value,
// e.g. EnumName("WEBHOOK_TYPE_", "SLACK") is "WEBHOOK_TYPE_SLACK".
func EnumName(prefix, stored string) string { return prefix + stored }

// EnumValue returns the stored spelling of an API value, which may come
// with or without its prefix and in any case: "slack", "SLACK" and
// "WEBHOOK_TYPE_SLACK" are all "SLACK".
func EnumValue(prefix, v string) string {
	v = strings.ToUpper(strings.TrimSpace(v))
	return strings.TrimPrefix(v, prefix)
}

// RetainLogsRequest is the body of PUT /api/v1/experiments/{id}/retain_logs:
// numDays is how many days the experiment's logs are kept, -1 for ever.
type RetainLogsRequest struct {
	NumDays int `json:"numDays"`
}

// CleanupLogsResponse answers POST /api/v1/cleanup_logs.
type CleanupLogsResponse struct {
	RemovedCount int64 `json:"removedCount"`
}
