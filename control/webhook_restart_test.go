package control_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
)

func TestAnEventSurvivesAMasterThatStopsBeforeDeliveringIt(t *testing.T) {
	url := dbtest.NewURL(t)
	d1, err := db.Open(context.Background(), url, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Close()
	h := harnessOn(t, d1, 1)
	release := make(chan struct{})
	rc := newReceiver(t, func(n int, _ request) int {
		if n == 0 {
			<-release // the first master's request hangs until that master is gone
		}
		return http.StatusOK
	})
	hook := h.webhookOn(rc.URL, "", stateTrigger(resolute.TriggerExperimentStateChange, "COMPLETED"))
	h.complete(single)
	// The state change committed with its event, and no master has sent it.
	if n := pending(t, h.db); n != 1 {
		t.Fatalf("%d events in the outbox, want 1", n)
	}

	// The first master takes it, starts sending, and stops mid-request.
	ctx1, stop1 := context.WithCancel(h.ctx)
	first := control.NewWebhookSender(d1, "k", "", quietLogger(), control.WithWebhookInterval(time.Hour))
	done1 := make(chan struct{})
	go func() { first.Run(ctx1); close(done1) }()
	select {
	case <-rc.start:
	case <-time.After(30 * time.Second):
		t.Fatal("the first master sent nothing")
	}
	stop1()
	<-done1
	d1.Close()
	close(release)
	first1 := <-rc.seen // the hung request, answered after its master stopped
	ds, _ := dbtestOpen(t, url).WebhookDeliveries(h.ctx, hook.ID, 10)
	if len(ds) != 1 || ds[0].DeliveredAt != nil {
		t.Fatalf("after the first master: %+v", ds)
	}

	// A new master, on its own connections, sends it.
	d2 := dbtestOpen(t, url)
	ctx2, stop2 := context.WithCancel(h.ctx)
	defer stop2()
	second := control.NewWebhookSender(d2, "k", "", quietLogger())
	go second.Run(ctx2)
	select {
	case r := <-rc.seen:
		var a, b struct {
			ID string `json:"event_id"`
		}
		json.Unmarshal(r.body, &a)
		json.Unmarshal(first1.body, &b)
		if a.ID == "" || a.ID != b.ID {
			t.Errorf("the new master sent event %q, the first %q: want the same event", a.ID, b.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the new master did not deliver the event")
	}
	waitFor(t, func() bool {
		ds, _ := d2.WebhookDeliveries(h.ctx, hook.ID, 10)
		return len(ds) == 1 && ds[0].DeliveredAt != nil
	}, "the delivery recorded as delivered")
}

// dbtestOpen opens the test database at url again, as a new master would.
func dbtestOpen(t *testing.T, url string) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), url, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// harnessOn is newHarness over an open database.
func harnessOn(t *testing.T, d *db.DB, slots int) *harness {
	ctx := context.Background()
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	rm := &fakeRM{total: slots, held: map[string][]int{}}
	h := &harness{t: t, db: d, rm: rm, ctx: ctx, admin: authz.User(admin.User)}
	h.run = control.NewRunner(d, control.NewConfigs(d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, quietLogger())
	h.x = h.run.Experiments
	return h
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
