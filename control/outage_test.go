package control_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/postgres"
)

// eventfulRM is a fakeRM whose events the test sends.
type eventfulRM struct {
	*fakeRM
	events chan resolute.AllocationEvent
}

func (r *eventfulRM) Events() <-chan resolute.AllocationEvent { return r.events }

// TestWhatEndsDuringADatabaseOutageIsAppliedOnceItIsBack kills a private
// PostgreSQL under a running trial, then has the trial print a line and
// exit while nothing answers: once the server is started again, the pump
// has stored the line and ended the trial, and the experiment completes.
func TestWhatEndsDuringADatabaseOutageIsAppliedOnceItIsBack(t *testing.T) {
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	tmp, err := os.MkdirTemp("", "resolute-outage-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o755)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := filepath.Join(tmp, "pg")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := postgres.Start(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	d, err := db.Open(ctx, srv.URL("postgres"), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	rm := &eventfulRM{fakeRM: &fakeRM{total: 1, held: map[string][]int{}}, events: make(chan resolute.AllocationEvent)}
	run := control.NewRunner(d, control.NewConfigs(d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, logger)
	e, err := run.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{ConfigYAML: single})
	if err != nil {
		t.Fatal(err)
	}
	if err := control.Cycle(run.Admission, ctx); err != nil {
		t.Fatal(err)
	}
	launched := rm.running()
	if len(launched) != 1 {
		t.Fatalf("launched %+v", launched)
	}
	a := launched[0]
	pumped := make(chan struct{})
	go func() { run.Admission.Pump(ctx); close(pumped) }()

	pid, _ := strconv.Atoi(strings.SplitN(readFile(t, filepath.Join(srv.DataDir(), "postmaster.pid")), "\n", 2)[0])
	syscall.Kill(pid, syscall.SIGKILL)
	waitUntil(t, "the database to be gone", func() bool { return db.Unavailable(d.Ping(ctx)) })

	rm.events <- resolute.AllocationLog{AllocationID: a.AllocationID, Time: time.Now(), Stream: "stdout", Line: "the last line"}
	rm.release(a.AllocationID)
	rm.events <- resolute.AllocationExited{AllocationID: a.AllocationID, ExitCode: 0, Time: time.Now()}
	// The pump holds the exit: it takes the next event only once done.
	select {
	case rm.events <- resolute.AllocationLog{AllocationID: a.AllocationID, Time: time.Now(), Stream: "stdout", Line: "after"}:
		t.Fatal("the pump took another event while the database was down: it dropped the exit")
	case <-time.After(time.Second):
	}

	srv, err = postgres.Start(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	waitUntil(t, "the experiment to complete", func() bool {
		got, err := d.Experiment(ctx, e.ID)
		return err == nil && got.State == resolute.StateCompleted
	})
	logs, err := d.TaskLogs(ctx, a.TaskID, db.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range logs {
		lines = append(lines, l.Log)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "the last line") {
		t.Errorf("the line printed during the outage is lost: %q", lines)
	}
	cancel()
	<-pumped
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
