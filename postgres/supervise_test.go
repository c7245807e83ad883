package postgres

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAKilledServerIsRestartedAndSaysSoOnce kills the postmaster with
// SIGKILL while it cannot be started again (its data directory is shut),
// then opens the directory: Down says why meanwhile, the log says it once,
// and the server comes back with its data.
func TestAKilledServerIsRestartedAndSaysSoOnce(t *testing.T) {
	dir := tempDir(t)
	if _, err := BinDir(); err != nil {
		t.Skip(err)
	}
	logs := &syncBuffer{}
	srv, err := Start(context.Background(), dir, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx)
	execSQL(t, srv.URL("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)")
	if down := srv.Down(); down != "" {
		t.Fatalf("Down while it runs: %q", down)
	}

	// The running server keeps its working directory; a new one cannot enter.
	if err := os.Chmod(srv.DataDir(), 0); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(srv.proc.cmd.Process.Pid, syscall.SIGKILL)
	waitFor(t, "Down to say it is restarting", func() bool { return strings.Contains(srv.Down(), "tries failed") })
	t.Logf("Down: %s", srv.Down())
	os.Chmod(srv.DataDir(), 0o700)

	waitFor(t, "the server to answer again", func() bool {
		conn, err := pgx.Connect(ctx, srv.URL("postgres"))
		if err != nil {
			return false
		}
		defer conn.Close(ctx)
		var v int
		return conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v) == nil && v == 7
	})
	waitFor(t, "Down to say it runs", func() bool { return srv.Down() == "" })
	out := logs.String()
	if n := strings.Count(out, `msg="embedded database exited; restarting it"`); n != 1 {
		t.Errorf("the exit was logged %d times:\n%s", n, out)
	}
	if n := strings.Count(out, `msg="embedded database did not start again; retrying"`); n != 1 {
		t.Errorf("the failed restarts were logged %d times:\n%s", n, out)
	}
	if n := strings.Count(out, `msg="embedded database is back"`); n != 1 {
		t.Errorf("the return was logged %d times:\n%s", n, out)
	}
}

func TestAStartWaitsForTheServerOfAnEarlierRun(t *testing.T) {
	dir := tempDir(t)
	earlier := start(t, dir)
	execSQL(t, earlier.URL("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)")

	logs := &syncBuffer{}
	type result struct {
		srv *Server
		err error
	}
	done := make(chan result, 1)
	go func() {
		srv, err := Start(context.Background(), dir, slog.New(slog.NewTextHandler(logs, nil)))
		done <- result{srv, err}
	}()
	waitFor(t, "the second start to wait", func() bool {
		return strings.Contains(logs.String(), "waiting for the embedded database of an earlier run")
	})
	select {
	case r := <-done:
		t.Fatalf("the second start did not wait: %v", r.err)
	default:
	}
	earlier.Stop()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.srv.Stop()
	execSQL(t, r.srv.URL("postgres"), "INSERT INTO kept VALUES (8)")
}

func TestAnEarlierServerThatStaysIsNamed(t *testing.T) {
	earlier := start(t, tempDir(t))
	err := earlier.waitForEarlierServer(context.Background(), 300*time.Millisecond)
	lockFile := filepath.Join(earlier.DataDir(), "postmaster.pid")
	pid := earlier.proc.cmd.Process.Pid
	if err == nil || !strings.Contains(err.Error(), lockFile) || !strings.Contains(err.Error(), "pid "+itoa(pid)) {
		t.Fatalf("err = %v, want one naming pid %d and %s", err, pid, lockFile)
	}
}

func TestALockFileOfAProcessThatIsGoneHoldsNothing(t *testing.T) {
	for name, content := range map[string]string{
		"no such process":        "999999999\n/x\n",
		"not a postgres process": itoa(os.Getpid()) + "\n/x\n",
		"not a pid":              "x\n",
		"no file":                "",
	} {
		if pid := lockHolder([]byte(content)); pid != 0 {
			t.Errorf("%s: held by %d", name, pid)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// syncBuffer is a log written by several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
