package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the driver goose migrates with

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// freshDB is a bootstrapped database of its own, opened as a master opens
// it, with a plain connection beside it for what a test reads or seeds in
// SQL; both close when the test ends. url opens it again (a second master).
func freshDB(tb testing.TB) (d *db.DB, conn *pgx.Conn, url string) {
	tb.Helper()
	ctx := context.Background()
	url = dbtest.NewURL(tb)
	d, err := db.Open(ctx, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Close)
	if err := d.Bootstrap(ctx, ""); err != nil {
		tb.Fatal(err)
	}
	if conn, err = pgx.Connect(ctx, url); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(ctx) })
	return d, conn, url
}

// newTrial adds an experiment with one trial.
func newTrial(t testing.TB, d *db.DB) resolute.Trial {
	t.Helper()
	ctx := context.Background()
	admin, err := d.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	projects, err := d.Projects(ctx, db.ProjectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := d.CreateExperiment(ctx, db.NewExperiment{ProjectID: projects[0].ID, UserID: admin.ID, Name: "m", State: "PAUSED",
		Config: []byte(`{"searcher": {"name": "single", "metric": "loss"}}`), SearcherState: []byte(`{}`), Weight: 1, ResourcePool: "default"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := d.CreateTrial(ctx, id, 1, "ACTIVE", []byte(`{}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func lossReport(trialID int64, run int, steps int64, loss float64) resolute.MetricsReport {
	return resolute.MetricsReport{TrialID: trialID, TrialRunID: run, StepsCompleted: steps, Group: "validation",
		Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %v}}`, loss))}
}

// steps lists the steps of a trial's visible validation reports.
func steps(t *testing.T, d *db.DB, trialID int64) string {
	t.Helper()
	list, err := d.TrialMetrics(context.Background(), trialID, "validation")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list {
		out = append(out, fmt.Sprintf("%d@run%d", r.StepsCompleted, r.TrialRunID))
	}
	return fmt.Sprint(out)
}

// TestAReportIsStoredOncePerRunAndStep: a retried report, in the same
// batch as the first or a later one, is dropped; another run may report
// the same step.
func TestAReportIsStoredOncePerRunAndStep(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	tr := newTrial(t, d)
	r := lossReport(tr.ID, 1, 10, 0.5)
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{r, r}); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{r, lossReport(tr.ID, 1, 20, 0.4), lossReport(tr.ID, 2, 20, 0.3)}); err != nil {
		t.Fatal(err)
	}
	if got, want := steps(t, d, tr.ID), "[10@run1 20@run1 20@run2]"; got != want {
		t.Errorf("validation reports %s, want %s", got, want)
	}
	series, err := d.ExperimentMetricSeries(ctx, tr.ExperimentID, "validation", "loss")
	if err != nil || len(series) != 1 || len(series[0].Points) != 3 {
		t.Errorf("series %+v, %v; want 3 points", series, err)
	}
}

// TestMetricsReportedSeparatelyAtOneStepAreKeptTogether: a script that
// reports loss and then accuracy at the same step (in one batch or two)
// keeps both, in one report, as Determined merges them.
func TestMetricsReportedSeparatelyAtOneStepAreKeptTogether(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	tr := newTrial(t, d)
	report := func(steps int64, avg string) resolute.MetricsReport {
		return resolute.MetricsReport{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: steps, Group: "validation",
			Metrics: json.RawMessage(`{"avg_metrics": ` + avg + `, "batch_metrics": []}`)}
	}
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{report(10, `{"loss": 0.5}`), report(10, `{"accuracy": 0.9}`)}); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{report(20, `{"loss": 0.4}`)}); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{report(20, `{"accuracy": 0.95}`), report(20, `{"loss": 0.4}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := d.TrialMetrics(ctx, tr.ID, "validation")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range got {
		var m struct {
			Avg map[string]float64 `json:"avg_metrics"`
		}
		json.Unmarshal(r.Metrics, &m)
		lines = append(lines, fmt.Sprintf("%d: loss %v accuracy %v", r.StepsCompleted, m.Avg["loss"], m.Avg["accuracy"]))
	}
	if want := []string{"10: loss 0.5 accuracy 0.9", "20: loss 0.4 accuracy 0.95"}; fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("reports %v, want %v", lines, want)
	}
}

// TestMigratingDropsDuplicateReportsAndHidesRolledBackOnes: a database
// from before metrics were stored once migrates despite its duplicates,
// and an earlier run's reports from where a later run began are hidden.
func TestMigratingDropsDuplicateReportsAndHidesRolledBackOnes(t *testing.T) {
	ctx := context.Background()
	url := dbtest.NewURL(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := db.Open(ctx, url, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	tr := newTrial(t, d)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Back to version 13 (the later migrations' Down), then reports as it
	// stored them.
	if err := d.MigrateDownTo(ctx, 13); err != nil {
		t.Fatal(err)
	}
	insert := func(run int, steps int64) {
		_, err := conn.Exec(ctx, `INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
			VALUES ($1, $2, $3, 'validation', '{"avg_metrics": {"loss": 1}}')`, tr.ID, run, steps)
		if err != nil {
			t.Fatal(err)
		}
	}
	for s := int64(10); s <= 40; s += 10 {
		insert(1, s)
	}
	insert(1, 20) // a retry
	// Another metric reported on its own at a step already reported.
	if _, err := conn.Exec(ctx, `INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
		VALUES ($1, 1, 10, 'validation', '{"avg_metrics": {"accuracy": 0.9}}')`, tr.ID); err != nil {
		t.Fatal(err)
	}
	for s := int64(30); s <= 50; s += 10 {
		insert(2, s)
	}
	d2, err := db.Open(ctx, url, quiet)
	if err != nil {
		t.Fatalf("migrating: %v", err)
	}
	defer d2.Close()
	if got, want := steps(t, d2, tr.ID), "[10@run1 20@run1 30@run2 40@run2 50@run2]"; got != want {
		t.Errorf("validation reports %s, want %s", got, want)
	}
	var rows int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM metrics").Scan(&rows); err != nil || rows != 7 {
		t.Errorf("%d rows (%v), want 7: the duplicates merged, the hidden kept", rows, err)
	}
	var avg string
	err = conn.QueryRow(ctx, `SELECT metrics->>'avg_metrics' FROM metrics WHERE trial_id = $1 AND steps_completed = 10`, tr.ID).Scan(&avg)
	if err != nil || avg != `{"loss": 1, "accuracy": 0.9}` {
		t.Errorf("step 10 after migrating: %s (%v), want loss and accuracy merged", avg, err)
	}
}

// TestAValidationIsToldToTheSearcherOnce: a retried validation POST does not
// reach the searcher again, a hidden report never does, and one not stored
// is told.
func TestAValidationIsToldToTheSearcherOnce(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	tr := newTrial(t, d)
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{lossReport(tr.ID, 1, 10, 0.5), lossReport(tr.ID, 1, 20, 0.4)}); err != nil {
		t.Fatal(err)
	}
	err := d.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: "00000000-0000-0000-0000-000000000010", TrialID: tr.ID,
		ExperimentID: tr.ExperimentID, AllocationID: "a", TaskID: "t", StepsCompleted: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.HideMetricsPastRestart(ctx, tr.ID, 2); err != nil || n != 1 {
		t.Fatalf("hid %d reports (%v), want 1: the report past the checkpoint", n, err)
	}
	for _, c := range []struct {
		run   int
		steps int64
		want  bool
	}{{1, 10, true}, {1, 10, false}, {1, 20, false}, {1, 30, true}} {
		var tell bool
		err := d.InTx(ctx, func(q *db.Queries) (err error) {
			tell, err = q.TellSearcher(ctx, tr.ID, c.run, c.steps)
			return err
		})
		if err != nil || tell != c.want {
			t.Errorf("tell the searcher of run %d at %d: %v, %v; want %v", c.run, c.steps, tell, err, c.want)
		}
	}
}

// TestACheckpointIsReportedAgainOnlyByItsTrialWhileItLasts: two trials
// reporting one uuid (a race the service's check cannot see) do not share
// it, and a deleted checkpoint stays deleted.
func TestACheckpointIsReportedAgainOnlyByItsTrialWhileItLasts(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	mine, other := newTrial(t, d), newTrial(t, d)
	c := resolute.Checkpoint{UUID: "00000000-0000-4000-8000-0000000000b1", TrialID: mine.ID, ExperimentID: mine.ExperimentID,
		AllocationID: "a", TaskID: mine.TaskID(), StepsCompleted: 10, Resources: map[string]int64{"w": 1}}
	if err := d.CreateCheckpoint(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Resources = map[string]int64{"w": 2}
	if err := d.CreateCheckpoint(ctx, c); err != nil {
		t.Fatalf("its own trial reports it again: %v", err)
	}
	theirs := c
	theirs.TrialID, theirs.ExperimentID, theirs.Resources = other.ID, other.ExperimentID, map[string]int64{"x": 9}
	if err := d.CreateCheckpoint(ctx, theirs); resolute.ErrorCode(err) != resolute.EConflict {
		t.Errorf("another trial reports the same uuid: %v", err)
	}
	if err := d.SetCheckpointDeleted(ctx, c.UUID); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateCheckpoint(ctx, c); resolute.ErrorCode(err) != resolute.EConflict {
		t.Errorf("a deleted checkpoint reported again: %v", err)
	}
	if got, _ := d.Checkpoint(ctx, c.UUID); got.TrialID != mine.ID || got.State != "DELETED" || got.Resources["w"] != 2 {
		t.Errorf("the checkpoint became %+v", got)
	}
}
