package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestWebhookVerbsCreateListTestAndDelete drives det webhook end to end
// against a real receiver: create, list --json, test (the receiver gets
// Determined's test event), delete; a user who is not an administrator is
// refused, and a word for an id is a usage error.
func TestWebhookVerbsCreateListTestAndDelete(t *testing.T) {
	got := make(chan map[string]any, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		got <- body
	}))
	defer receiver.Close()

	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	out := c.ok("", "webhook", "create", "done", receiver.URL, "--experiment-state", "completed")
	id := regexp.MustCompile(`Created webhook (\d+) \(done\)`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("det webhook create: %q", out)
	}
	var listed resolute.WebhooksResponse
	if err := json.Unmarshal([]byte(c.ok("", "webhook", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	hooks := listed.Webhooks
	if len(hooks) != 1 || hooks[0].URL != receiver.URL || len(hooks[0].Triggers) != 1 || hooks[0].Triggers[0].Condition["state"] != resolute.StateCompleted {
		t.Fatalf("det webhook list --json: %+v", hooks)
	}

	if out := c.ok("", "webhook", "test", id[1]); !strings.Contains(out, "Webhook "+id[1]+" accepted the test event") {
		t.Errorf("det webhook test: %q", out)
	}
	if body := <-got; body["event_type"] != "EXPERIMENT_STATE_CHANGE" {
		t.Errorf("the test event: %v", body)
	}

	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	for _, verb := range []string{"test", "delete"} {
		if r := c.run("", "webhook", verb, id[1]); r.code != 1 || !strings.Contains(r.stderr, "only administrators") {
			t.Errorf("eve: det webhook %s: exit %d %s", verb, r.code, r.stderr)
		}
	}
	c.ok("", "user", "login", "admin")

	if r := c.run("", "webhook", "delete", "done"); r.code != 2 || !strings.Contains(r.stderr, `webhook: expected a positive integer id, got "done"`) {
		t.Errorf("a name for an id: exit %d %s", r.code, r.stderr)
	}
	if out := c.ok("", "webhook", "delete", id[1]); !strings.Contains(out, "Deleted webhook "+id[1]) {
		t.Errorf("det webhook delete: %q", out)
	}
	listed = resolute.WebhooksResponse{}
	if err := json.Unmarshal([]byte(c.ok("", "webhook", "list", "--json")), &listed); err != nil || len(listed.Webhooks) != 0 {
		t.Errorf("after delete: %+v %v", listed, err)
	}
	if r := c.run("", "webhook", "test", id[1]); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("testing a deleted webhook: exit %d %s", r.code, r.stderr)
	}
}
