package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
)

// quickConfig is a trial that prints line and exits with code.
func quickConfig(name, line string, code int, extra string) string {
	return "name: " + name + "\nentrypoint: python3 -c \"print('" + line + "', flush=True); raise SystemExit(" + itoa(int64(code)) + ")\"\n" +
		"searcher: {name: single, metric: loss}\nmax_restarts: 2\n" + extra
}

// quickDir is a context directory with nothing in it but a README.
func quickDir(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README"), []byte("a trial in its entrypoint\n"), 0o644)
	return dir
}

func masterOnTestDB(t *testing.T, extra ...string) *mastertest.Master {
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	args := append([]string{"--data-dir", filepath.Join(mastertest.TempDir(t), "data"), "--resource-manager-slots", "2",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable"}, extra...)
	return mastertest.New(t, mastertest.Build(t), args...)
}

// TestAWebhookEventIsDeliveredByTheNextMasterWhenTheFirstIsKilled: an
// experiment completes; the master sends its webhook event but is killed
// (SIGKILL) before the receiver answers; the next master sends the same
// event again, and the receiver accepts it.
func TestAWebhookEventIsDeliveredByTheNextMasterWhenTheFirstIsKilled(t *testing.T) {
	type got struct {
		id, sig, ts string
		body        []byte
	}
	arrived, release := make(chan got, 10), make(chan struct{})
	var answered atomic.Bool
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			ID string `json:"event_id"`
		}
		json.Unmarshal(body, &ev)
		arrived <- got{ev.ID, r.Header.Get("X-Determined-AI-Signature"), r.Header.Get("X-Determined-AI-Signature-Timestamp"), body}
		if answered.CompareAndSwap(false, true) {
			<-release // the first request hangs until its master is dead
		}
	}))
	defer receiver.Close()
	defer close(release)

	m := masterOnTestDB(t, "--webhooks-signing-key", "e2e-key")
	m.Start()
	token := m.Login("admin")
	hook := resolute.Webhook{Name: "done", URL: receiver.URL, Triggers: []resolute.Trigger{{
		TriggerType: resolute.TriggerExperimentStateChange, Condition: map[string]any{"state": "COMPLETED"}}}}
	if code := m.Call("POST", "/api/v1/webhooks", token, hook, nil); code != 200 {
		t.Fatalf("create webhook: %d", code)
	}
	m.CreateExperiment(token, quickConfig("hooked", "done", 0, ""), quickDir(t))
	var before got
	select {
	case before = <-arrived:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no webhook request within 3 minutes\n%s", m.Output())
	}
	m.Kill()

	m.Start()
	select {
	case after := <-arrived:
		if after.id == "" || after.id != before.id {
			t.Fatalf("the next master sent event %q; the killed one %q", after.id, before.id)
		}
		ts := int64(0)
		json.Unmarshal([]byte(after.ts), &ts)
		if after.sig != control.SignWebhook("e2e-key", ts, after.body) {
			t.Errorf("signature %q does not match the body", after.sig)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the next master did not send the event\n%s", m.Output())
	}
}

// TestALogPolicyStopsTheRetriesOfARealTrial: a trial process that prints
// a line matching a cancel_retries policy and fails runs once; the same
// trial without the policy is restarted max_restarts times.
func TestALogPolicyStopsTheRetriesOfARealTrial(t *testing.T) {
	m := masterOnTestDB(t)
	m.Start()
	token := m.Login("admin")
	policy := "log_policies:\n  - name: Bad data\n    pattern: \"corrupt record \\\\d+\"\n    action: cancel_retries\n"
	with := m.CreateExperiment(token, quickConfig("with-policy", "corrupt record 17", 1, policy), quickDir(t))
	without := m.CreateExperiment(token, quickConfig("without-policy", "corrupt record 17", 1, ""), quickDir(t))
	for _, c := range []struct {
		id       int64
		restarts int
		policy   string
	}{{with, 0, "Bad data"}, {without, 2, ""}} {
		e := m.WaitDone(token, c.id, 3*time.Minute)
		trials := m.Trials(token, c.id)
		if e.State != resolute.StateError || len(trials) != 1 || trials[0].Restarts != c.restarts || trials[0].LogPolicyMatched != c.policy {
			t.Errorf("experiment %d: %s, trials %+v; want ERROR after %d restarts, policy %q", c.id, e.State, trials, c.restarts, c.policy)
		}
	}
}
