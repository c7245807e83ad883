package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Webhooks creates, lists, changes, tests and deletes webhooks: the
// cluster's administrators' business, as in Determined (CanEditWebhooks).
// The sender (webhook_outbox.go) delivers their events.
type Webhooks struct {
	db     *db.DB
	sender *WebhookSender
	logger *slog.Logger
}

// The states a state trigger may name.
var (
	experimentTriggerStates = []string{resolute.StateActive, resolute.StatePaused, resolute.StateStoppingCanceled,
		resolute.StateStoppingKilled, resolute.StateStoppingCompleted, resolute.StateStoppingError,
		resolute.StateCompleted, resolute.StateCanceled, resolute.StateError}
	taskTriggerStates = []string{"QUEUED", "RUNNING", "TERMINATING", "TERMINATED"}
)

// CheckWebhook validates a webhook to create and returns it in the API's
// spelling: a name, an http(s) URL, a known type and mode (DEFAULT and
// WORKSPACE when left out), at least one trigger, each state trigger naming
// a state of its kind, each TASK_LOG trigger one valid regex.
func CheckWebhook(w resolute.Webhook) (resolute.Webhook, error) {
	bad := func(format string, args ...any) (resolute.Webhook, error) {
		return w, resolute.Errorf(resolute.EInvalid, format, args...)
	}
	if err := CheckName("name", w.Name, MaxNameLen); err != nil {
		return w, err
	}
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("valid url required: an http or https URL, got %q", w.URL)
	}
	switch resolute.EnumValue("WEBHOOK_TYPE_", w.WebhookType) {
	case "", "UNSPECIFIED", "DEFAULT":
		w.WebhookType = resolute.WebhookTypeDefault
	case "SLACK":
		w.WebhookType = resolute.WebhookTypeSlack
	default:
		return bad("unknown webhook type %q: DEFAULT or SLACK", w.WebhookType)
	}
	switch resolute.EnumValue("WEBHOOK_MODE_", w.Mode) {
	case "", "UNSPECIFIED", "WORKSPACE":
		w.Mode = resolute.WebhookModeWorkspace
	case "SPECIFIC":
		w.Mode = resolute.WebhookModeSpecific
	default:
		return bad("unknown webhook mode %q: WORKSPACE or SPECIFIC", w.Mode)
	}
	if len(w.Triggers) == 0 {
		return bad("at least one trigger required")
	}
	for i, t := range w.Triggers {
		t.TriggerType = resolute.EnumName("TRIGGER_TYPE_", resolute.EnumValue("TRIGGER_TYPE_", t.TriggerType))
		if t.Condition == nil {
			t.Condition = map[string]any{}
		}
		switch t.TriggerType {
		case resolute.TriggerExperimentStateChange, resolute.TriggerTaskStateChange:
			states := experimentTriggerStates
			if t.TriggerType == resolute.TriggerTaskStateChange {
				states = taskTriggerStates
			}
			s, ok := t.Condition["state"].(string)
			s = strings.TrimPrefix(strings.ToUpper(s), "STATE_")
			if !ok || len(t.Condition) != 1 || !slices.Contains(states, s) {
				return bad("trigger %d: a state change needs the condition {\"state\": S} with S one of %s", i+1, strings.Join(states, ", "))
			}
			t.Condition = map[string]any{"state": s}
		case resolute.TriggerTaskLog:
			re, ok := t.Condition["regex"].(string)
			if !ok || len(t.Condition) != 1 || re == "" {
				return bad("trigger %d: webhook task log condition must have the one key 'regex', a string", i+1)
			}
			if _, err := regexp.Compile(re); err != nil {
				return bad("trigger %d: not a valid regular expression: %v", i+1, err)
			}
		default:
			return bad("trigger %d: unsupported trigger type %q: EXPERIMENT_STATE_CHANGE, TASK_STATE_CHANGE or TASK_LOG (METRIC_THRESHOLD_EXCEEDED and CUSTOM are not supported)", i+1, t.TriggerType)
		}
		w.Triggers[i] = t
	}
	return w, nil
}

// Create adds a webhook (administrators).
func (s *Webhooks) Create(ctx context.Context, a authz.Actor, w resolute.Webhook) (resolute.Webhook, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return w, err
	}
	w, err := CheckWebhook(w)
	if err != nil {
		return w, err
	}
	out, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Webhook, error) {
		if w.WorkspaceID != 0 {
			if _, err := q.Workspace(ctx, w.WorkspaceID); err != nil {
				return w, err
			}
		}
		return q.CreateWebhook(ctx, w)
	})
	if err == nil {
		s.sender.changed()
		s.logger.Info("webhook created", "webhook", out.Name, "id", out.ID, "user", a.Username())
	}
	return out, err
}

// List returns every webhook (administrators).
func (s *Webhooks) List(ctx context.Context, a authz.Actor) ([]resolute.Webhook, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return nil, err
	}
	return s.db.Webhooks(ctx)
}

// Get returns one webhook and its latest deliveries (administrators).
func (s *Webhooks) Get(ctx context.Context, a authz.Actor, id int64) (resolute.Webhook, []resolute.WebhookDelivery, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return resolute.Webhook{}, nil, err
	}
	w, err := s.db.Webhook(ctx, id)
	if err != nil {
		return w, nil, err
	}
	d, err := s.db.WebhookDeliveries(ctx, id, 50)
	return w, d, err
}

// Delete removes a webhook (administrators); deliveries not yet made are
// still attempted.
func (s *Webhooks) Delete(ctx context.Context, a authz.Actor, id int64) error {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return err
	}
	err := s.db.DeleteWebhook(ctx, id)
	if err == nil {
		s.sender.changed()
		s.logger.Info("webhook deleted", "id", id, "user", a.Username())
	}
	return err
}

// SetURL changes where a webhook is sent (administrators).
func (s *Webhooks) SetURL(ctx context.Context, a authz.Actor, id int64, rawURL string) error {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return err
	}
	if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return resolute.Errorf(resolute.EInvalid, "valid url required: an http or https URL, got %q", rawURL)
	}
	err := s.db.SetWebhookURL(ctx, id, rawURL)
	if err == nil {
		s.sender.changed()
	}
	return err
}

// Test sends Determined's test event to a webhook now, once, and says how
// the receiver answered (administrators).
func (s *Webhooks) Test(ctx context.Context, a authz.Actor, id int64) error {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return err
	}
	w, err := s.db.Webhook(ctx, id)
	if err != nil {
		return err
	}
	body, err := testBody(w.WebhookType, newEventID(), s.sender.now())
	if err != nil {
		return err
	}
	if err := s.sender.post(ctx, w.URL, body); err != nil {
		return resolute.Errorf(resolute.EInvalid, "test event to webhook %d: %s", id, userSafe(err))
	}
	return nil
}

// userSafe is an error of a request to a receiver, safe to show: the
// receiver is the administrator's own.
func userSafe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Sprintf("%s: %v", ue.Op, ue.Err)
	}
	return err.Error()
}
