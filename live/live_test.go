package live_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/live"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// start runs a listener on a fresh database and waits until it listens.
func start(t *testing.T, opts ...live.Option) (*db.DB, *live.Listener) {
	t.Helper()
	d := dbtest.New(t)
	if err := d.Bootstrap(context.Background(), ""); err != nil { // the users that own workspaces
		t.Fatal(err)
	}
	l := live.New(d, slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go l.Run(ctx)
	waitListening(t, d, 1)
	return d, l
}

// waitListening waits until n backends of the test database LISTEN.
func waitListening(t *testing.T, d *db.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := d.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got int
		err = conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN `+live.Channel+`'`).Scan(&got)
		conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exec(t *testing.T, d *db.DB, sql string) {
	t.Helper()
	conn, err := d.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func next(t *testing.T, s *live.Subscription, within time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	topics, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("no change within %s: %v", within, err)
	}
	return topics
}

func TestAChangeToATableReachesASubscriber(t *testing.T) {
	d, l := start(t)
	s := l.Subscribe()
	defer s.Close()
	exec(t, d, `INSERT INTO workspaces (name, user_id) SELECT 'pushed', id FROM users LIMIT 1`)
	if diff := cmp.Diff([]string{"workspaces"}, next(t, s, 5*time.Second)); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
}

func TestABurstIsDeliveredOnceAtOnceAndOnceWhenTheWindowEnds(t *testing.T) {
	const window = 400 * time.Millisecond
	_, l := start(t, live.WithWindow(window))
	s := l.Subscribe()
	defer s.Close()
	begin := time.Now()
	for range 50 {
		l.Publish("trials")
		l.Publish("metrics")
	}
	if diff := cmp.Diff([]string{"metrics", "trials"}, next(t, s, time.Second)); diff != "" {
		t.Errorf("first delivery (-want +got):\n%s", diff)
	}
	for range 50 {
		l.Publish("trials")
	}
	got := next(t, s, 2*time.Second)
	if diff := cmp.Diff([]string{"trials"}, got); diff != "" {
		t.Errorf("second delivery (-want +got):\n%s", diff)
	}
	if since := time.Since(begin); since < window {
		t.Errorf("second delivery after %s, within the window of %s", since, window)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*window)
	defer cancel()
	if topics, err := s.Next(ctx); err == nil {
		t.Errorf("a third delivery %v for one burst", topics)
	}
}

func TestBulkInsertsNotifyOnce(t *testing.T) {
	d, l := start(t, live.WithWindow(time.Millisecond))
	s := l.Subscribe()
	defer s.Close()
	// Two statements in one transaction, each of many rows: one
	// notification, folded by PostgreSQL.
	exec(t, d, `BEGIN;
		INSERT INTO workspaces (name, user_id) SELECT 'w' || g, (SELECT min(id) FROM users) FROM generate_series(1, 100) g;
		UPDATE workspaces SET name = name || '!' WHERE name LIKE 'w%';
		COMMIT`)
	if diff := cmp.Diff([]string{"workspaces"}, next(t, s, 5*time.Second)); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if topics, err := s.Next(ctx); err == nil {
		t.Errorf("a second delivery %v for one transaction", topics)
	}
}

func TestTheListenerReconnectsAfterItsConnectionIsKilled(t *testing.T) {
	d, l := start(t, live.WithBackoff(50*time.Millisecond), live.WithWindow(time.Millisecond))
	s := l.Subscribe()
	defer s.Close()
	exec(t, d, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+live.Channel+`'`)
	// Once it listens again it says every topic changed, as some may have
	// been missed meanwhile (in one delivery or several: the window is 1 ms).
	seen := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(seen) < len(live.Topics) && time.Now().Before(deadline); {
		for _, topic := range next(t, s, 10*time.Second) {
			seen[topic] = true
		}
	}
	for _, topic := range live.Topics {
		if !seen[topic] {
			t.Errorf("after reconnecting, no %s; got %v", topic, seen)
		}
	}
	waitListening(t, d, 1)
	exec(t, d, `INSERT INTO workspaces (name, user_id) SELECT 'after', id FROM users LIMIT 1`)
	for got := next(t, s, 5*time.Second); !slices.Contains(got, "workspaces"); got = next(t, s, 5*time.Second) {
	}
}

func TestAClosedSubscriptionGetsNothing(t *testing.T) {
	_, l := start(t)
	s := l.Subscribe()
	s.Close()
	l.Publish("trials")
	if _, err := s.Next(context.Background()); err != live.ErrClosed {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
}

func TestChangedSinceSaysWhatWasPublishedAfterASeq(t *testing.T) {
	_, l := start(t)
	l.Publish("experiments")
	since := l.Seq()
	if got := l.ChangedSince(since); len(got) != 0 {
		t.Errorf("changed since now: %v", got)
	}
	l.Publish("trials")
	l.Publish("metrics")
	l.Publish("trials")
	if diff := cmp.Diff([]string{"metrics", "trials"}, l.ChangedSince(since)); diff != "" {
		t.Errorf("changed since (-want +got):\n%s", diff)
	}
	// A seq from another run of the master: anything may have changed.
	if got := l.ChangedSince(l.Seq() + 100); len(got) != len(live.Topics)+1 {
		t.Errorf("changed since a seq ahead: %v", got)
	}
}
