package live_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/live"
)

// experimentWithTrials inserts an experiment with n trials and returns
// their ids.
func experimentWithTrials(t *testing.T, d *db.DB, n int) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exp int64
	err = conn.QueryRow(ctx, `INSERT INTO experiments (project_id, user_id, name, state, config, original_config, searcher_state, seed)
		SELECT p.id, p.user_id, 'e', 'ACTIVE', '{}', '', '{}', 1 FROM projects p ORDER BY p.id LIMIT 1 RETURNING id`).Scan(&exp)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `INSERT INTO trials (experiment_id, request_id, state, hparams, seed)
		SELECT $1, g, 'ACTIVE', '{}', 1 FROM generate_series(1, $2::int) g RETURNING id`, exp, n)
	if err != nil {
		t.Fatal(err)
	}
	var trials []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		trials = append(trials, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return exp, trials
}

// notifications LISTENs on a connection of its own while do runs, and
// returns every payload that arrived within a moment after.
func notifications(t *testing.T, d *db.DB, do func()) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+live.Channel); err != nil {
		t.Fatal(err)
	}
	do()
	var got []string
	for {
		wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if err != nil {
			return got
		}
		got = append(got, n.Payload)
	}
}

func TestABulkInsertOfManyTrialsMetricsNotifiesOncePerTrial(t *testing.T) {
	d, _ := start(t)
	exp, trials := experimentWithTrials(t, d, 5)
	got := notifications(t, d, func() {
		// 5 trials × 100 reports in one statement.
		exec(t, d, fmt.Sprintf(`INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
			SELECT t, 1, s, 'training', '{"avg_metrics": {"loss": 1}}'
			FROM unnest(ARRAY[%d, %d, %d, %d, %d]) t, generate_series(1, 100) s`, trials[0], trials[1], trials[2], trials[3], trials[4]))
	})
	want := []string{"metrics", live.Object("experiment", exp)}
	for _, id := range trials {
		want = append(want, live.Object("trial", id))
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications of one insert (-want +got):\n%s", diff)
	}
}

func TestEachTableNamesTheObjectsItChanged(t *testing.T) {
	d, _ := start(t)
	exp, trials := experimentWithTrials(t, d, 1)
	trial := trials[0]
	cases := []struct {
		sql  string
		want []string
	}{
		{fmt.Sprintf(`UPDATE experiments SET notes = 'n' WHERE id = %d`, exp),
			[]string{live.Object("experiment", exp), "experiments", "queue:default"}},
		{fmt.Sprintf(`UPDATE trials SET state = 'COMPLETED' WHERE id = %d`, trial),
			[]string{live.Object("experiment", exp), live.Object("trial", trial), "trials"}},
		{fmt.Sprintf(`INSERT INTO allocations (id, task_id, trial_id, state, slots, token_hash) VALUES ('trial-%[1]d.1', 'trial-%[1]d', %[1]d, 'PENDING', 1, '\x01')`, trial),
			[]string{"allocations", "queue:default", fmt.Sprintf("task:trial-%d", trial), live.Object("trial", trial)}},
		{fmt.Sprintf(`INSERT INTO task_logs (task_id, allocation_id, time, log) VALUES ('trial-%[1]d', 'trial-%[1]d.1', now(), 'hi')`, trial),
			[]string{live.Object("experiment-logs", exp), fmt.Sprintf("logs:trial-%d", trial), "task_logs"}},
		{`INSERT INTO tasks (id, type, state, config, user_id, project_id, resource_pool, slots)
			SELECT 'command-9', 'COMMAND', 'QUEUED', '{}', p.user_id, p.id, 'gpus', 1 FROM projects p ORDER BY id LIMIT 1`,
			[]string{"queue:gpus", "task:command-9", "tasks"}},
		{`INSERT INTO task_logs (task_id, allocation_id, time, log) VALUES ('command-9', 'command-9.1', now(), 'hi')`,
			[]string{"logs:command-9", "task_logs"}},
	}
	for _, c := range cases {
		got := notifications(t, d, func() { exec(t, d, c.sql) })
		slices.Sort(got)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.sql, diff)
		}
	}
}

func TestASubscriptionGetsOnlyItsTopics(t *testing.T) {
	d, l := start(t, live.WithWindow(time.Millisecond))
	_, trials := experimentWithTrials(t, d, 2)
	a, b := live.Object("trial", trials[0]), live.Object("trial", trials[1])
	s := l.Subscribe(a)
	defer s.Close()
	drain(s) // the trials' creation
	report := func(trial int64, step int) {
		exec(t, d, fmt.Sprintf(`INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
			VALUES (%d, 1, %d, 'training', '{}')`, trial, step))
	}
	report(trials[1], 1)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if topics, err := s.Next(ctx); err == nil {
		t.Fatalf("subscribed to %s, told %v when %s reported", a, topics, b)
	}
	report(trials[0], 1)
	if diff := cmp.Diff([]string{a}, next(t, s, 5*time.Second)); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
}

func TestWithTableTopicsOnlyTheTablesArePublished(t *testing.T) {
	d, l := start(t, live.WithTableTopics(), live.WithWindow(time.Millisecond))
	_, trials := experimentWithTrials(t, d, 1)
	s := l.Subscribe()
	defer s.Close()
	drain(s) // the trial's creation
	exec(t, d, fmt.Sprintf(`INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
		VALUES (%d, 1, 1, 'training', '{}')`, trials[0]))
	if diff := cmp.Diff([]string{"metrics"}, next(t, s, 5*time.Second)); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
}

func TestChangedSinceTellsOnlyTheTopicsAsked(t *testing.T) {
	_, l := start(t)
	since := l.Seq()
	l.Publish("trial:1")
	l.Publish("trial:2")
	if diff := cmp.Diff([]string{"trial:2"}, l.ChangedSince(since, "trial:2", "trial:3")); diff != "" {
		t.Errorf("changed since (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"trial:3", "trial:9"}, l.ChangedSince(l.Seq()+1, "trial:9", "trial:3")); diff != "" {
		t.Errorf("changed since a seq ahead (-want +got):\n%s", diff)
	}
}

// drain takes what s is told until nothing comes for a moment.
func drain(s *live.Subscription) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := s.Next(ctx)
		cancel()
		if err != nil {
			return
		}
	}
}
