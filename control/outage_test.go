package control_test

import (
	"context"
	"fmt"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startPrivateDatabase(t, ctx)
	srv, dir, d, logger := p.srv, p.dir, p.d, p.logger
	rm := &eventfulRM{fakeRM: &fakeRM{total: 1, held: map[string][]int{}}, events: make(chan resolute.AllocationEvent)}
	run, e := p.runSingle(t, ctx, rm)
	var err error
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

	p.kill(t, ctx)

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

// privateDatabase is a PostgreSQL of a test's own, which it may kill and
// start again, with a bootstrapped database on it.
type privateDatabase struct {
	dir    string
	srv    *postgres.Server
	d      *db.DB
	logger *slog.Logger
	admin  resolute.User
}

func startPrivateDatabase(t *testing.T, ctx context.Context) *privateDatabase {
	t.Helper()
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	tmp, err := os.MkdirTemp("", "resolute-outage-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o755)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	p := &privateDatabase{dir: filepath.Join(tmp, "pg"), logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if p.srv, err = postgres.Start(ctx, p.dir, p.logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.srv.Stop() })
	if p.d, err = db.Open(ctx, p.srv.URL("postgres"), p.logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.d.Close)
	if err := p.d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := p.d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	p.admin = admin.User
	return p
}

// runSingle makes a runner over rm and an experiment of one trial.
func (p *privateDatabase) runSingle(t *testing.T, ctx context.Context, rm control.ResourceManager) (*control.Runner, resolute.Experiment) {
	t.Helper()
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	run := control.NewRunner(p.d, control.NewConfigs(p.d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, p.logger)
	e, err := run.Experiments.Create(ctx, authz.User(p.admin), control.CreateRequest{ConfigYAML: single})
	if err != nil {
		t.Fatal(err)
	}
	return run, e
}

// kill kills the postmaster with SIGKILL and waits until the database is
// gone.
func (p *privateDatabase) kill(t *testing.T, ctx context.Context) {
	t.Helper()
	pid, _ := strconv.Atoi(strings.SplitN(readFile(t, filepath.Join(p.srv.DataDir(), "postmaster.pid")), "\n", 2)[0])
	syscall.Kill(pid, syscall.SIGKILL)
	waitUntil(t, "the database to be gone", func() bool { return db.Unavailable(p.d.Ping(ctx)) })
}

// contextReadingRM is a fakeRM whose Launch reads the allocation's
// context, as the real ones do, first calling before (once).
type contextReadingRM struct {
	*fakeRM
	before func()
}

func (r *contextReadingRM) Launch(ctx context.Context, s resolute.LaunchSpec) error {
	if r.before != nil {
		r.before()
		r.before = nil
	}
	if _, err := io.Copy(io.Discard, s.Context(ctx)); err != nil {
		return fmt.Errorf("launch %s: read the context: %w", s.AllocationID, err)
	}
	return r.fakeRM.Launch(ctx, s)
}

// TestALaunchTheDatabaseCutsShortWhileTheContextIsReadIsRequeued: the
// database dies while the resource manager reads a trial's context; the
// allocation goes back to the queue once it is back (instead of failing
// the run, as a refusal of the resource manager would), and the next cycle
// launches it.
func TestALaunchTheDatabaseCutsShortWhileTheContextIsReadIsRequeued(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startPrivateDatabase(t, ctx)
	rm := &contextReadingRM{fakeRM: &fakeRM{total: 1, held: map[string][]int{}}}
	rm.before = func() {
		p.kill(t, ctx)
		go func() { // back a moment later, while the launch waits for it
			time.Sleep(500 * time.Millisecond)
			srv, err := postgres.Start(ctx, p.dir, p.logger)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { srv.Stop() })
		}()
	}
	run, e := p.runSingle(t, ctx, rm)
	if err := control.Cycle(run.Admission, ctx); err != nil {
		t.Fatal(err)
	}
	if got := rm.running(); len(got) != 0 {
		t.Fatalf("launched while the database was down: %+v", got)
	}
	waitUntil(t, "the database to be back", func() bool { return p.d.Ping(ctx) == nil })
	trials, err := p.d.Trials(ctx, e.ID)
	if err != nil || len(trials) != 1 || trials[0].State != resolute.StateActive {
		t.Fatalf("the trial after the cut-short launch: %+v, %v", trials, err)
	}
	waitUntil(t, "the next cycle to launch it", func() bool {
		if err := control.Cycle(run.Admission, ctx); err != nil && !db.Unavailable(err) {
			t.Fatal(err)
		}
		return len(rm.running()) == 1
	})
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
