package control

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// What webhooks send, in Determined's shapes: a DEFAULT webhook gets
// {event_id, event_type, timestamp, condition, event_data}; a SLACK webhook
// gets a Slack message of blocks (and a coloured attachment for an
// experiment that ended). Which webhooks fire is webhookSelects'.

// webhookSelects reports whether webhook w fires for an experiment (or, with
// nil integrations and task true, a task) of workspace workspaceID: a
// webhook of another workspace never does; integrations.webhooks.exclude
// turns every webhook off for the experiment; a SPECIFIC webhook fires only
// for experiments whose integrations.webhooks names it (webhook_id or
// webhook_name), and never for tasks.
func webhookSelects(w resolute.Webhook, workspaceID int64, ic *expconf.WebhooksConfig, task bool) bool {
	if w.WorkspaceID != 0 && w.WorkspaceID != workspaceID {
		return false
	}
	if ic != nil && ic.Exclude {
		return false
	}
	if w.Mode != resolute.WebhookModeSpecific {
		return true
	}
	if task || ic == nil {
		return false
	}
	for _, id := range ic.WebhookIDs {
		if int64(id) == w.ID {
			return true
		}
	}
	for _, name := range ic.WebhookNames {
		if name == w.Name {
			return true
		}
	}
	return false
}

// stateMatches reports whether a state trigger's condition names state
// (Determined's spelling "COMPLETED", or "STATE_COMPLETED").
func stateMatches(t resolute.Trigger, state string) bool {
	return strings.TrimPrefix(strings.ToUpper(t.State()), "STATE_") == state
}

// eventPayload is the body of a DEFAULT webhook.
type eventPayload struct {
	ID        string         `json:"event_id"`
	Type      string         `json:"event_type"`
	Timestamp int64          `json:"timestamp"`
	Condition map[string]any `json:"condition"`
	Data      map[string]any `json:"event_data"`
}

// experimentPayload is event_data.experiment.
type experimentPayload struct {
	ID           int64  `json:"id"`
	State        string `json:"state"`
	Name         string `json:"name"`
	Duration     int    `json:"duration"` // seconds
	ResourcePool string `json:"resource_pool"`
	Slots        int    `json:"slots"`
	Workspace    string `json:"workspace"`
	Project      string `json:"project"`
}

// taskPayload is event_data.task (Resolute's TASK_STATE_CHANGE).
type taskPayload struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	State        string `json:"state"`
	Description  string `json:"description"`
	Duration     int    `json:"duration"`
	ResourcePool string `json:"resource_pool"`
	Slots        int    `json:"slots"`
	Workspace    string `json:"workspace"`
	Project      string `json:"project"`
}

// taskLogPayload is event_data.task_log.
type taskLogPayload struct {
	TaskID        string `json:"task_id"`
	NodeName      string `json:"node_name"`
	TriggeringLog string `json:"triggering_log"`
	ExperimentID  int64  `json:"experiment_id"`
	TrialID       int64  `json:"trial_id"`
}

// Slack's message format: blocks of sections, attachments with a colour.
type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type   string      `json:"type"`
	Text   slackText   `json:"text"`
	Fields []slackText `json:"fields,omitempty"`
}

type slackAttachment struct {
	Color  string       `json:"color"`
	Blocks []slackBlock `json:"blocks"`
}

type slackMessage struct {
	Blocks      []slackBlock      `json:"blocks"`
	Attachments []slackAttachment `json:"attachments,omitempty"`
}

// newEventID is a random UUID (version 4).
func newEventID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func duration(start time.Time, end *time.Time, now time.Time) time.Duration {
	if end != nil {
		return end.Sub(start)
	}
	return now.Sub(start)
}

// slackDuration is "2h 5min", as Determined writes it.
func slackDuration(d time.Duration) string {
	h, m := math.Modf(d.Hours())
	return fmt.Sprintf("%vh %vmin", h, int(m*60))
}

// experimentBody is the body for webhook type typ of an experiment that
// reached state; baseURL, when set, makes the Slack message link to it.
func experimentBody(typ, eventID string, e db.WebhookExperiment, cfg *expconf.ExperimentConfig, state string, now time.Time, baseURL string) ([]byte, error) {
	d := duration(e.CreatedAt, e.EndedAt, now)
	if typ == resolute.WebhookTypeSlack {
		return experimentSlack(e, state, d, baseURL)
	}
	p := experimentPayload{ID: e.ID, State: state, Name: e.Name, Duration: int(d.Seconds()),
		Workspace: e.WorkspaceName, Project: e.ProjectName}
	if cfg != nil {
		p.ResourcePool, p.Slots = cfg.Resources.ResourcePool, cfg.Resources.SlotsPerTrial
	}
	return json.Marshal(eventPayload{ID: eventID, Type: "EXPERIMENT_STATE_CHANGE", Timestamp: now.Unix(),
		Condition: map[string]any{"state": state}, Data: map[string]any{"experiment": p}})
}

func experimentSlack(e db.WebhookExperiment, state string, d time.Duration, baseURL string) ([]byte, error) {
	status, mark, colour, word := "Your experiment completed successfully 🎉", "✅", "#13B670", "Completed"
	switch state {
	case resolute.StateCompleted:
	case resolute.StateError:
		status, mark, colour, word = "Your experiment has stopped with errors", "❌", "#DD5040", "Errored"
	default:
		status, mark, colour, word = "Your experiment is now "+strings.ToLower(state), "ℹ️", "#6666CC", titleWord(state)
	}
	title := fmt.Sprintf("%s %s (#%d)", mark, e.Name, e.ID)
	if baseURL != "" {
		title = fmt.Sprintf("%s <%s/experiments/%d | %s (#%d)>", mark, baseURL, e.ID, e.Name, e.ID)
	}
	fields := []slackText{
		{Type: "mrkdwn", Text: "*Status*: " + word},
		{Type: "mrkdwn", Text: "*Duration*: " + slackDuration(d)},
		{Type: "mrkdwn", Text: "*Workspace*: " + e.WorkspaceName},
		{Type: "mrkdwn", Text: "*Project*: " + e.ProjectName},
	}
	return json.Marshal(slackMessage{
		Blocks:      []slackBlock{{Type: "section", Text: slackText{Type: "plain_text", Text: status}}},
		Attachments: []slackAttachment{{Color: colour, Blocks: []slackBlock{{Type: "section", Text: slackText{Type: "mrkdwn", Text: title}, Fields: fields}}}},
	})
}

// taskBody is the body of a task's state change (Resolute's trigger).
func taskBody(typ, eventID string, t db.WebhookTask, state string, now time.Time, baseURL string) ([]byte, error) {
	d := duration(t.CreatedAt, t.EndedAt, now)
	if typ == resolute.WebhookTypeSlack {
		name := t.ID
		if baseURL != "" {
			name = fmt.Sprintf("<%s/tasks/%s | %s>", baseURL, t.ID, t.ID)
		}
		text := fmt.Sprintf("%s %s is now *%s*", titleWord(t.Type), name, strings.ToLower(state))
		if t.Description != "" {
			text += " (" + t.Description + ")"
		}
		return json.Marshal(slackMessage{Blocks: []slackBlock{{Type: "section", Text: slackText{Type: "mrkdwn", Text: text},
			Fields: []slackText{{Type: "mrkdwn", Text: "*Duration*: " + slackDuration(d)},
				{Type: "mrkdwn", Text: "*Workspace*: " + t.WorkspaceName}}}}})
	}
	p := taskPayload{ID: t.ID, Type: t.Type, State: state, Description: t.Description, Duration: int(d.Seconds()),
		ResourcePool: t.ResourcePool, Slots: int(t.Slots), Workspace: t.WorkspaceName, Project: t.ProjectName}
	return json.Marshal(eventPayload{ID: eventID, Type: "TASK_STATE_CHANGE", Timestamp: now.Unix(),
		Condition: map[string]any{"state": state}, Data: map[string]any{"task": p}})
}

// taskLogBody is the body of a trial's log line that matched regex.
func taskLogBody(typ, eventID string, p taskLogPayload, regex string, now time.Time, baseURL string) ([]byte, error) {
	if typ == resolute.WebhookTypeSlack {
		msg := fmt.Sprintf("Experiment ID `%d`, Trial ID `%d`, running on node `%s`, reported a log\n```%s```\nThis log matched the regex\n```%s```\n",
			p.ExperimentID, p.TrialID, p.NodeName, p.TriggeringLog, regex)
		path := fmt.Sprintf("/experiments/%d/trials/%d/logs", p.ExperimentID, p.TrialID)
		if baseURL != "" {
			msg += fmt.Sprintf("<%s%s | View full logs here>", baseURL, path)
		} else {
			msg += "View full logs at " + path
		}
		return json.Marshal(slackMessage{Blocks: []slackBlock{{Type: "section", Text: slackText{Type: "mrkdwn", Text: msg}}}})
	}
	return json.Marshal(eventPayload{ID: eventID, Type: "TASK_LOG", Timestamp: now.Unix(),
		Condition: map[string]any{"regex": regex}, Data: map[string]any{"task_log": p}})
}

// testBody is what "test" sends: Determined's test event.
func testBody(typ, eventID string, now time.Time) ([]byte, error) {
	if typ == resolute.WebhookTypeSlack {
		return json.Marshal(slackMessage{Blocks: []slackBlock{{Type: "section", Text: slackText{Type: "plain_text", Text: "test"}}}})
	}
	return json.Marshal(eventPayload{ID: eventID, Type: "EXPERIMENT_STATE_CHANGE", Timestamp: now.Unix(),
		Condition: map[string]any{"state": resolute.StateCompleted}, Data: map[string]any{"data": "test"}})
}

func titleWord(s string) string {
	s = strings.ToLower(s)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
