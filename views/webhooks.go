package views

import "github.com/resolute-ml/resolute"

// WebhookList is the administrators' page of webhooks.
type WebhookList struct {
	Shell      Shell
	Webhooks   []resolute.Webhook
	Workspaces []resolute.Workspace
	Form       WebhookForm
}

// WebhookForm is the new-webhook form with what was typed.
type WebhookForm struct {
	Name, URL, Type, Mode, Workspace string
	ExperimentStates                 []string
	TaskStates                       []string
	LogRegex                         string
	Errors                           FormErrors
}

// WebhookPage is one webhook and its latest deliveries.
type WebhookPage struct {
	Shell      Shell
	Webhook    resolute.Webhook
	Deliveries []resolute.WebhookDelivery
	Workspace  string
}

// WebhookExperimentStates are the experiment states the form offers.
var WebhookExperimentStates = []string{resolute.StateCompleted, resolute.StateError, resolute.StateCanceled,
	resolute.StatePaused, resolute.StateActive}

// WebhookTaskStates are the task states the form offers.
var WebhookTaskStates = []string{"RUNNING", "TERMINATED"}

// triggerText is a trigger as a person reads it.
func triggerText(t resolute.Trigger) string {
	switch t.TriggerType {
	case resolute.TriggerExperimentStateChange:
		return "experiment " + t.State()
	case resolute.TriggerTaskStateChange:
		return "task " + t.State()
	case resolute.TriggerTaskLog:
		return "log matches /" + t.Regex() + "/"
	}
	return t.TriggerType
}

func shortEnum(v string) string {
	for _, p := range []string{"WEBHOOK_TYPE_", "WEBHOOK_MODE_"} {
		if len(v) > len(p) && v[:len(p)] == p {
			return v[len(p):]
		}
	}
	return v
}

func deliveryState(d resolute.WebhookDelivery) string {
	switch {
	case d.DeliveredAt != nil:
		return "delivered"
	case d.Failed:
		return "failed"
	case d.Attempts > 0:
		return "retrying"
	}
	return "pending"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
