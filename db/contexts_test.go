package db_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// randomBytes are n bytes that do not compress, as a tar.gz.
func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// newExperiment stores an experiment with the given context (nil: none) or
// the context of experiment from.
func newExperiment(t *testing.T, d *db.DB, tgz []byte, from *int64) int64 {
	t.Helper()
	ctx := context.Background()
	admin, _ := d.UserByUsername(ctx, "admin")
	projects, _ := d.Projects(ctx, db.ProjectFilter{})
	e := db.NewExperiment{ProjectID: projects[0].ID, UserID: admin.ID, Name: "c", State: "PAUSED", Config: []byte(`{}`),
		SearcherState: []byte(`{}`), Weight: 1, ResourcePool: "default", ContextFrom: from}
	if tgz != nil {
		e.Context = bytes.NewReader(tgz)
	}
	id, err := d.CreateExperiment(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newTask(t *testing.T, d *db.DB, tgz []byte) string {
	t.Helper()
	ctx := context.Background()
	admin, _ := d.UserByUsername(ctx, "admin")
	projects, _ := d.Projects(ctx, db.ProjectFilter{})
	task := db.NewTask{Type: resolute.TaskCommand, Config: []byte(`{}`), UserID: admin.ID, ProjectID: projects[0].ID, ResourcePool: "default"}
	if tgz != nil {
		task.Context = bytes.NewReader(tgz)
	}
	id, err := d.CreateTask(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func countChunks(t *testing.T, url, table string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAContextIsKeptInChunksAndReadBackWhole(t *testing.T) {
	ctx := context.Background()
	url := dbtest.NewURL(t)
	d, err := db.Open(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	tgz := randomBytes(t, 2<<20+12345)
	id := newExperiment(t, d, tgz, nil)
	if got := readAll(t, d.ExperimentContext(ctx, id)); !bytes.Equal(got, tgz) {
		t.Fatalf("read back %d bytes, want the %d stored", len(got), len(tgz))
	}
	if n := countChunks(t, url, "experiment_context_chunks"); n != 3 {
		t.Errorf("%d chunks, want 3 of at most 1 MiB", n)
	}
	fork := newExperiment(t, d, nil, &id)
	if got := readAll(t, d.ExperimentContext(ctx, fork)); !bytes.Equal(got, tgz) {
		t.Errorf("the fork's context is %d bytes, want its parent's %d", len(got), len(tgz))
	}
	none := newExperiment(t, d, nil, nil)
	if got := readAll(t, d.ExperimentContext(ctx, none)); len(got) != 0 {
		t.Errorf("an experiment without a context reads %d bytes", len(got))
	}
	exact := randomBytes(t, 1<<20)
	task := newTask(t, d, exact)
	if got := readAll(t, d.TaskContext(ctx, task)); !bytes.Equal(got, exact) {
		t.Errorf("the task's context read back as %d bytes, want %d", len(got), len(exact))
	}
	if n := countChunks(t, url, "task_context_chunks"); n != 1 {
		t.Errorf("%d chunks of a 1 MiB context, want 1", n)
	}
}

// TestMigratingSplitsStoredContextsIntoChunks stores contexts as the schema
// before migration 19 kept them, one bytea each, and migrates: each reads
// back the same, and migrating back down gives the bytea back.
func TestMigratingSplitsStoredContextsIntoChunks(t *testing.T) {
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
	big, small := randomBytes(t, 3<<20+1), randomBytes(t, 100)
	withBig, withNone := newExperiment(t, d, big, nil), newExperiment(t, d, nil, nil)
	task := newTask(t, d, small)
	if err := d.MigrateDownTo(ctx, 18); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored []byte
	if err := conn.QueryRow(ctx, "SELECT tgz FROM experiment_contexts WHERE experiment_id = $1", withBig).Scan(&stored); err != nil || !bytes.Equal(stored, big) {
		t.Fatalf("migrating down kept %d bytes of the context (%v), want %d", len(stored), err, len(big))
	}
	// As the old schema stored them: a context replaced, one added.
	big = randomBytes(t, 5<<20)
	if _, err := conn.Exec(ctx, "UPDATE experiment_contexts SET tgz = $1 WHERE experiment_id = $2", big, withBig); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "UPDATE tasks SET context = $1 WHERE id = $2", small, task); err != nil {
		t.Fatal(err)
	}

	d2, err := db.Open(ctx, url, quiet)
	if err != nil {
		t.Fatalf("migrating: %v", err)
	}
	defer d2.Close()
	if got := readAll(t, d2.ExperimentContext(ctx, withBig)); !bytes.Equal(got, big) {
		t.Errorf("after migrating, the context reads %d bytes, want %d", len(got), len(big))
	}
	if got := readAll(t, d2.ExperimentContext(ctx, withNone)); len(got) != 0 {
		t.Errorf("after migrating, no context reads %d bytes", len(got))
	}
	if got := readAll(t, d2.TaskContext(ctx, task)); !bytes.Equal(got, small) {
		t.Errorf("after migrating, the task's context reads %d bytes, want %d", len(got), len(small))
	}
	if n := countChunks(t, url, "experiment_context_chunks"); n != 5 {
		t.Errorf("%d chunks of a 5 MiB context, want 5", n)
	}
}
