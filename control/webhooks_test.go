package control_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// receiver is a real HTTP server that records what webhooks send; answer
// decides each response (nil: 200).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int, r request) int
	seen   chan request  // each request, once answered
	start  chan struct{} // each request, as it arrives
}

type request struct {
	body      []byte
	signature string
	timestamp string
	status    int
}

func newReceiver(t *testing.T, answer func(n int, r request) int) *receiver {
	rc := &receiver{answer: answer, seen: make(chan request, 100), start: make(chan struct{}, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.start <- struct{}{}
		body, _ := io.ReadAll(r.Body)
		req := request{body: body, signature: r.Header.Get("X-Determined-AI-Signature"),
			timestamp: r.Header.Get("X-Determined-AI-Signature-Timestamp"), status: http.StatusOK}
		rc.mu.Lock()
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.answer != nil {
			req.status = rc.answer(n, req)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		rc.mu.Unlock()
		w.WriteHeader(req.status)
		rc.seen <- req
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// webhookOn creates a webhook through the service, as an administrator.
func (h *harness) webhookOn(url, typ string, triggers ...resolute.Trigger) resolute.Webhook {
	h.t.Helper()
	svc := control.NewServices(h.db, h.run, nil, quietLogger())
	w, err := svc.Webhooks.Create(h.ctx, h.admin, resolute.Webhook{Name: "hook-" + strconv.Itoa(len(h.webhooks())+1), URL: url,
		WebhookType: typ, Triggers: triggers})
	if err != nil {
		h.t.Fatal(err)
	}
	return w
}

func (h *harness) webhooks() []resolute.Webhook {
	hooks, err := h.db.Webhooks(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return hooks
}

func stateTrigger(typ, state string) resolute.Trigger {
	return resolute.Trigger{TriggerType: typ, Condition: map[string]any{"state": state}}
}

// complete runs the harness's single-trial experiment to COMPLETED.
func (h *harness) complete(yaml string) resolute.Experiment {
	h.t.Helper()
	e := h.create(yaml)
	h.admit()
	run := h.rm.running()
	if err := h.x.ValidationReported(h.ctx, h.trialOf(run[0]), 1, 1, map[string]any{"loss": 0.5}); err != nil {
		h.t.Fatal(err)
	}
	h.exit(run[0].AllocationID, 0)
	return h.experiment(e.ID)
}

// pending counts the events in the outbox.
func pending(t *testing.T, d *db.DB) int {
	t.Helper()
	n := 0
	err := d.InTx(context.Background(), func(q *db.Queries) error {
		events, err := q.TakeWebhookEvents(context.Background(), 1000)
		n = len(events)
		if err == nil {
			err = errRollback
		}
		return err
	})
	if err != errRollback {
		t.Fatal(err)
	}
	return n
}

var errRollback = resolute.Errorf(resolute.EConflict, "rolled back on purpose")

func TestAnExperimentThatCompletesIsDeliveredSignedAsDeterminedSendsIt(t *testing.T) {
	h := newHarness(t, 1)
	rc := newReceiver(t, nil)
	hook := h.webhookOn(rc.URL+"/hook", "", stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED"))
	e := h.complete(single)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s", e.State)
	}
	if n := pending(t, h.db); n == 0 {
		t.Fatal("the state change wrote no event in the outbox")
	}
	s := control.NewWebhookSender(h.db, "the-key", "", quietLogger())
	if err := s.Cycle(h.ctx); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1 (only COMPLETED is a trigger)", len(got))
	}
	ts, _ := strconv.ParseInt(got[0].timestamp, 10, 64)
	if want := control.SignWebhook("the-key", ts, got[0].body); got[0].signature != want || ts == 0 {
		t.Errorf("signature %q at %q, want %q", got[0].signature, got[0].timestamp, want)
	}
	var body struct {
		EventID   string         `json:"event_id"`
		EventType string         `json:"event_type"`
		Timestamp int64          `json:"timestamp"`
		Condition map[string]any `json:"condition"`
		Data      struct {
			Experiment map[string]any `json:"experiment"`
		} `json:"event_data"`
	}
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatalf("%v: %s", err, got[0].body)
	}
	if body.EventType != "EXPERIMENT_STATE_CHANGE" || len(body.EventID) != 36 || body.Timestamp == 0 {
		t.Errorf("event %+v", body)
	}
	want := map[string]any{"id": float64(e.ID), "state": "COMPLETED", "name": "one", "resource_pool": "",
		"slots": float64(1), "workspace": "Uncategorized", "project": "Uncategorized", "duration": body.Data.Experiment["duration"]}
	if diff := cmp.Diff(want, body.Data.Experiment); diff != "" {
		t.Errorf("event_data.experiment (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"state": "COMPLETED"}, body.Condition); diff != "" {
		t.Errorf("condition:\n%s", diff)
	}
	ds, err := h.db.WebhookDeliveries(h.ctx, hook.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].DeliveredAt == nil || ds[0].Attempts != 1 || ds[0].EventID != body.EventID {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	// Nothing more is sent.
	if err := s.Cycle(h.ctx); err != nil || len(rc.requests()) != 1 {
		t.Fatalf("a second cycle sent again: %d requests, %v", len(rc.requests()), err)
	}
}

func TestAFailingReceiverIsRetriedWithExponentialBackoff(t *testing.T) {
	h := newHarness(t, 1)
	rc := newReceiver(t, func(n int, _ request) int {
		if n < 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	hook := h.webhookOn(rc.URL, "", stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED"))
	h.complete(single)
	clk := &clock{now: time.Now()}
	s := control.NewWebhookSender(h.db, "k", "", quietLogger(), control.WithWebhookClock(clk.Now),
		control.WithWebhookBackoff(10*time.Second, time.Hour, 5))
	delivery := func() resolute.WebhookDelivery {
		ds, err := h.db.WebhookDeliveries(h.ctx, hook.ID, 10)
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries %+v %v", ds, err)
		}
		return ds[0]
	}
	cycle := func() {
		if err := s.Cycle(h.ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the first attempt fails: the next is 10 s later
	if d := delivery(); d.Attempts != 1 || d.NextAttempt.Sub(clk.Now()).Round(time.Second) != 10*time.Second || d.LastError == "" {
		t.Fatalf("after attempt 1: %+v", d)
	}
	clk.Add(9 * time.Second)
	cycle() // not yet due
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("%d requests before the backoff ended", n)
	}
	clk.Add(time.Second)
	cycle() // the second attempt fails: the next is 20 s later
	if d := delivery(); d.Attempts != 2 || d.NextAttempt.Sub(clk.Now()).Round(time.Second) != 20*time.Second {
		t.Fatalf("after attempt 2: %+v", d)
	}
	clk.Add(20 * time.Second)
	cycle()
	if d := delivery(); d.Attempts != 3 || d.DeliveredAt == nil || d.Failed {
		t.Fatalf("after attempt 3: %+v", d)
	}
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestADeliveryFailsForGoodAfterItsLastAttempt(t *testing.T) {
	h := newHarness(t, 1)
	rc := newReceiver(t, func(int, request) int { return http.StatusInternalServerError })
	hook := h.webhookOn(rc.URL, "", stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED"))
	h.complete(single)
	clk := &clock{now: time.Now()}
	s := control.NewWebhookSender(h.db, "k", "", quietLogger(), control.WithWebhookClock(clk.Now),
		control.WithWebhookBackoff(time.Second, 2*time.Second, 3))
	for range 5 {
		if err := s.Cycle(h.ctx); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
	}
	ds, _ := h.db.WebhookDeliveries(h.ctx, hook.ID, 10)
	if len(ds) != 1 || !ds[0].Failed || ds[0].Attempts != 3 || len(rc.requests()) != 3 {
		t.Fatalf("deliveries %+v after %d requests", ds, len(rc.requests()))
	}
}

func TestTheBackoffDoublesUpToItsCap(t *testing.T) {
	tests := map[string]struct {
		attempts int
		want     time.Duration
	}{
		"after the first failure it is the first wait": {1, 2 * time.Second},
		"after the second it doubles":                  {2, 4 * time.Second},
		"after the fifth it is 16 times the first":     {5, 32 * time.Second},
		"it never exceeds the cap":                     {20, time.Minute},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := control.WebhookBackoff(2*time.Second, time.Minute, tt.attempts); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestASlackWebhookGetsASlackMessage(t *testing.T) {
	h := newHarness(t, 1)
	rc := newReceiver(t, nil)
	h.webhookOn(rc.URL, "SLACK", stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED"),
		stateTrigger(resolute.TriggerExperimentStateChange, "ERROR"))
	ok := h.complete(single)
	failed := h.create(single)
	h.admit()
	for range 2 { // max_restarts 1: two failures end it
		h.exit(h.rm.running()[0].AllocationID, 1)
		h.admit()
	}
	if got := h.experiment(failed.ID); got.State != resolute.StateError {
		t.Fatalf("experiment %s", got.State)
	}
	s := control.NewWebhookSender(h.db, "k", "https://resolute.example", quietLogger())
	if err := s.Cycle(h.ctx); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	type text struct{ Type, Text string }
	type block struct {
		Type   string
		Text   text
		Fields []text
	}
	type message struct {
		Blocks      []block
		Attachments []struct {
			Color  string
			Blocks []block
		}
	}
	for i, want := range []struct {
		status, colour, title, word string
	}{
		{"Your experiment completed successfully 🎉", "#13B670", "✅ <https://resolute.example/experiments/" + itoa(ok.ID) + " | one (#" + itoa(ok.ID) + ")>", "*Status*: Completed"},
		{"Your experiment has stopped with errors", "#DD5040", "❌ <https://resolute.example/experiments/" + itoa(failed.ID) + " | one (#" + itoa(failed.ID) + ")>", "*Status*: Errored"},
	} {
		var m message
		for _, r := range got { // sent at once, in either order
			var one message
			if err := json.Unmarshal(r.body, &one); err != nil {
				t.Fatal(err)
			}
			if len(one.Attachments) == 1 && one.Attachments[0].Color == want.colour {
				m = one
			}
		}
		if len(m.Blocks) != 1 || m.Blocks[0].Type != "section" || m.Blocks[0].Text != (text{"plain_text", want.status}) {
			t.Errorf("message %d blocks: %+v", i, m.Blocks)
		}
		if len(m.Attachments) != 1 || m.Attachments[0].Color != want.colour || len(m.Attachments[0].Blocks) != 1 {
			t.Fatalf("message %d attachments: %+v", i, m.Attachments)
		}
		b := m.Attachments[0].Blocks[0]
		if b.Text != (text{"mrkdwn", want.title}) || len(b.Fields) < 2 || b.Fields[0] != (text{"mrkdwn", want.word}) {
			t.Errorf("message %d attachment block: %+v", i, b)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestATaskThatEndsFiresTaskStateChangeWebhooks(t *testing.T) {
	h := newHarness(t, 0)
	rc := newReceiver(t, nil)
	h.webhookOn(rc.URL, "", stateTrigger(resolute.TriggerTaskStateChange, "TERMINATED"))
	task := h.queueTask(h.admin, resolute.TaskCommand)
	if err := h.run.Tasks.Kill(h.ctx, h.admin, task.ID); err != nil {
		t.Fatal(err)
	}
	s := control.NewWebhookSender(h.db, "k", "", quietLogger())
	if err := s.Cycle(h.ctx); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	var body struct {
		EventType string `json:"event_type"`
		Data      struct {
			Task map[string]any `json:"task"`
		} `json:"event_data"`
	}
	json.Unmarshal(got[0].body, &body)
	if body.EventType != "TASK_STATE_CHANGE" || body.Data.Task["id"] != task.ID || body.Data.Task["state"] != "TERMINATED" ||
		body.Data.Task["type"] != resolute.TaskCommand {
		t.Errorf("body %s", got[0].body)
	}
}

func TestWhichWebhooksFireForAnExperiment(t *testing.T) {
	all := resolute.Webhook{ID: 1, Name: "all", Mode: resolute.WebhookModeWorkspace}
	ws2 := resolute.Webhook{ID: 2, Name: "ws2", Mode: resolute.WebhookModeWorkspace, WorkspaceID: 2}
	specific := resolute.Webhook{ID: 3, Name: "named", Mode: resolute.WebhookModeSpecific}
	tests := map[string]struct {
		hook      resolute.Webhook
		workspace int64
		ic        *expconf.WebhooksConfig
		task      bool
		want      bool
	}{
		"a workspace webhook fires for every experiment":                   {all, 1, nil, false, true},
		"a webhook of another workspace does not":                          {ws2, 1, nil, false, false},
		"a webhook of the experiment's workspace does":                     {ws2, 2, nil, false, true},
		"exclude turns every webhook off":                                  {all, 1, &expconf.WebhooksConfig{Exclude: true}, false, false},
		"a specific webhook does not fire for an experiment not naming it": {specific, 1, nil, false, false},
		"a specific webhook fires when webhook_name names it":              {specific, 1, &expconf.WebhooksConfig{WebhookNames: []string{"named"}}, false, true},
		"a specific webhook fires when webhook_id names it":                {specific, 1, &expconf.WebhooksConfig{WebhookIDs: []int{3}}, false, true},
		"a specific webhook does not fire for another id":                  {specific, 1, &expconf.WebhooksConfig{WebhookIDs: []int{4}}, false, false},
		"a specific webhook never fires for a task":                        {specific, 1, nil, true, false},
		"a workspace webhook fires for a task":                             {all, 1, nil, true, true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := control.WebhookSelects(tt.hook, tt.workspace, tt.ic, tt.task); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAWebhookIsRefusedWhenItCouldNeverFire(t *testing.T) {
	tests := map[string]struct {
		hook resolute.Webhook
		want string
	}{
		"no trigger": {resolute.Webhook{Name: "a", URL: "http://x/"}, "at least one trigger required"},
		"a URL that is not http": {resolute.Webhook{Name: "a", URL: "ftp://x/", Triggers: []resolute.Trigger{stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED")}},
			`valid url required: an http or https URL, got "ftp://x/"`},
		"a state no experiment reaches": {resolute.Webhook{Name: "a", URL: "http://x/", Triggers: []resolute.Trigger{stateTrigger(resolute.TriggerExperimentStateChange, "DONE")}},
			`trigger 1: a state change needs the condition {"state": S} with S one of ACTIVE, PAUSED, STOPPING_CANCELED, STOPPING_KILLED, STOPPING_COMPLETED, STOPPING_ERROR, COMPLETED, CANCELED, ERROR`},
		"a bad regex": {resolute.Webhook{Name: "a", URL: "http://x/", Triggers: []resolute.Trigger{{TriggerType: "TASK_LOG", Condition: map[string]any{"regex": "("}}}},
			"trigger 1: not a valid regular expression: error parsing regexp: missing closing ): `(`"},
		"a metric threshold, which Resolute does not send": {resolute.Webhook{Name: "a", URL: "http://x/", Triggers: []resolute.Trigger{{TriggerType: "TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED"}}},
			`trigger 1: unsupported trigger type "TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED": EXPERIMENT_STATE_CHANGE, TASK_STATE_CHANGE or TASK_LOG (METRIC_THRESHOLD_EXCEEDED and CUSTOM are not supported)`},
		"an unknown type": {resolute.Webhook{Name: "a", URL: "http://x/", WebhookType: "teams", Triggers: []resolute.Trigger{stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED")}},
			`unknown webhook type "teams": DEFAULT or SLACK`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := control.CheckWebhook(tt.hook)
			if got := resolute.ErrorMessage(err); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestOnlyAdministratorsManageWebhooks(t *testing.T) {
	h := newHarness(t, 0)
	svc := control.NewServices(h.db, h.run, nil, quietLogger())
	bob, err := svc.Users.Create(h.ctx, h.admin, resolute.UserSpec{Username: "bob"}, "s3cret-pw-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Webhooks.Create(h.ctx, authz.User(bob), resolute.Webhook{Name: "x", URL: "http://x/",
		Triggers: []resolute.Trigger{stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED")}})
	if resolute.ErrorCode(err) != resolute.EForbidden {
		t.Fatalf("a user created a webhook: %v", err)
	}
}
