package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestWebhooksThroughDeterminedsAPI(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	tested := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Determined-AI-Signature") != "" {
			tested++
		}
	}))
	defer receiver.Close()

	// Determined's clients send camelCase and the enums with their prefix.
	var created resolute.WebhookResponse
	body := `{"name":"done","url":"` + receiver.URL + `","webhookType":"WEBHOOK_TYPE_SLACK","mode":"WEBHOOK_MODE_WORKSPACE",
		"triggers":[{"triggerType":"TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE","condition":{"state":"COMPLETED"}},
		{"triggerType":"TRIGGER_TYPE_TASK_LOG","condition":{"regex":"NaN"}}]}`
	if code := api(t, m, "POST", "/api/v1/webhooks", token, body, &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	w := created.Webhook
	if w.ID == 0 || w.WebhookType != "WEBHOOK_TYPE_SLACK" || w.Mode != "WEBHOOK_MODE_WORKSPACE" || len(w.Triggers) != 2 ||
		w.Triggers[1].TriggerType != "TRIGGER_TYPE_TASK_LOG" || w.Triggers[1].Condition["regex"] != "NaN" || w.Triggers[0].WebhookID != w.ID {
		t.Fatalf("created %+v", w)
	}
	// The snake_case spelling of the proto works too.
	if code := api(t, m, "POST", "/api/v1/webhooks", token, `{"name":"snake","url":"http://x.example/","webhook_type":"WEBHOOK_TYPE_DEFAULT",
		"triggers":[{"trigger_type":"TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE","condition":{"state":"ERROR"}}]}`, nil); code != 200 {
		t.Fatalf("create in snake_case: %d", code)
	}
	var list resolute.WebhooksResponse
	if code := api(t, m, "GET", "/api/v1/webhooks", token, "", &list); code != 200 || len(list.Webhooks) != 2 {
		t.Fatalf("list: %d %+v", code, list)
	}
	if code := api(t, m, "POST", "/api/v1/webhooks/"+itoa(w.ID)+"/test", token, "", nil); code != 200 || tested != 1 {
		t.Fatalf("test: %d, %d signed requests", code, tested)
	}
	if code := api(t, m, "PATCH", "/api/v1/webhooks/"+itoa(w.ID), token, `{"url":"ftp://nope"}`, nil); code != 400 {
		t.Fatalf("patch to a bad url: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/webhooks", token, `{"name":"none","url":"http://x.example/","triggers":[]}`, nil); code != 400 {
		t.Fatalf("a webhook without triggers: %d", code)
	}
	if code := api(t, m, "DELETE", "/api/v1/webhooks/"+itoa(w.ID), token, "", nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code := api(t, m, "DELETE", "/api/v1/webhooks/"+itoa(w.ID), token, "", nil); code != 404 {
		t.Fatalf("delete again: %d", code)
	}
}

func TestTheWebhooksPageCreatesListsAndDeletes(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	resp, body := get(t, c, m, "/admin/webhooks")
	if resp.StatusCode != 200 {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	wants(t, "the empty page", body, `id="no-webhooks"`, `id="new-webhook"`)
	resp, body = post(t, c, m, "/admin/webhooks", url.Values{"name": {"ops"}, "url": {"https://hooks.slack.example/T1"},
		"type": {"SLACK"}, "experiment_state": {"COMPLETED", "ERROR"}, "log_regex": {"("}})
	if resp.StatusCode != 422 || !strings.Contains(body, "not a valid regular expression") || !strings.Contains(body, `value="ops"`) {
		t.Fatalf("a bad regex: %d\n%s", resp.StatusCode, body)
	}
	resp, _ = post(t, c, m, "/admin/webhooks", url.Values{"name": {"ops"}, "url": {"https://hooks.slack.example/T1"},
		"type": {"SLACK"}, "experiment_state": {"COMPLETED", "ERROR"}, "log_regex": {"Traceback"}})
	if resp.StatusCode != 303 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	_, body = get(t, c, m, "/admin/webhooks")
	wants(t, "the list", body, `id="webhooks"`, "ops", "https://hooks.slack.example/T1", "SLACK", "experiment COMPLETED",
		"experiment ERROR", "log matches /Traceback/")
	hooks, _ := m.DB.Webhooks(t.Context())
	_, body = get(t, c, m, "/admin/webhooks/"+itoa(hooks[0].ID))
	wants(t, "the webhook's page", body, `id="webhook-facts"`, `id="deliveries"`)
	if resp, _ = post(t, c, m, "/admin/webhooks/"+itoa(hooks[0].ID)+"/delete", url.Values{}); resp.StatusCode != 303 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if hooks, _ = m.DB.Webhooks(t.Context()); len(hooks) != 0 {
		t.Fatalf("after delete: %+v", hooks)
	}
	// Only administrators see it.
	token := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", token, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	bob := signInPages(t, m, "bob", "s3cret-pw")
	if resp, _ := get(t, bob, m, "/admin/webhooks"); resp.StatusCode != 403 {
		t.Errorf("bob got the page: %d", resp.StatusCode)
	}
}

func TestTheTrialPageShowsTheLogPolicyItsLogsMatched(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[0]
	_, body := get(t, c, f.m, "/trials/"+itoa(tr.ID))
	if strings.Contains(body, `id="log-policy-matched"`) {
		t.Fatal("a trial that matched no policy shows one")
	}
	if err := f.m.DB.SetTrialLogPolicyMatched(t.Context(), tr.ID, "CUDA OOM", true, nil); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, c, f.m, "/trials/"+itoa(tr.ID))
	wants(t, "the trial header", body, `id="log-policy-matched"`, "Log policy matched", "CUDA OOM", "retries cancelled")
}

func TestLogRetentionThroughTheAPI(t *testing.T) {
	f := newPageFixture(t)
	token := login(t, f.m, "admin", "")
	e := f.trials[0].ExperimentID
	if code := api(t, f.m, "PUT", "/api/v1/experiments/"+itoa(e)+"/retain_logs", token, `{"numDays":-1}`, nil); code != 200 {
		t.Fatalf("retain for ever: %d", code)
	}
	if d, err := f.m.DB.ExperimentLogRetention(t.Context(), e); err != nil || d == nil || *d != -1 {
		t.Fatalf("retention %v, %v", d, err)
	}
	if code := api(t, f.m, "PUT", "/api/v1/experiments/"+itoa(e)+"/retain_logs", token, `{"numDays":40000}`, nil); code != 400 {
		t.Fatalf("40000 days: %d", code)
	}
	var out resolute.CleanupLogsResponse
	if code := api(t, f.m, "POST", "/api/v1/cleanup_logs", token, "", &out); code != 200 {
		t.Fatalf("cleanup: %d", code)
	}
}
