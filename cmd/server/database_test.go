package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/postgres"
)

// TestTheMasterTellsTheTruthWhileItsDatabaseIsDownAndServesOnceItIsBack
// kills the embedded PostgreSQL with SIGKILL while it cannot start again
// (its data directory is shut): /health says the database is down and why,
// the API answers 503 asking to retry, the log says it once; once the
// directory is open again the master serves as before, its data intact.
func TestTheMasterTellsTheTruthWhileItsDatabaseIsDownAndServesOnceItIsBack(t *testing.T) {
	dataDir := embeddedDataDir(t)
	logs := &syncBuffer{}
	addr, stop := startLogging(t, logs, "--data-dir", dataDir, "--port", freePort(t), "--tasks-port", freePort(t))
	defer stop()
	base := "http://" + addr
	token := login(t, base)
	if code, _ := call(t, base+"/api/v1/workspaces", token); code != 200 {
		t.Fatalf("before the kill: %d", code)
	}

	pgData := filepath.Join(dataDir, "postgres", "data")
	if err := os.Chmod(pgData, 0); err != nil {
		t.Fatal(err)
	}
	killPostmaster(t, pgData)
	waitUntil(t, "/health to say the database is down", func() bool {
		code, health := call(t, base+"/health", "")
		return code == 503 && health["database"] == "down" && strings.Contains(health["detail"].(string), "restarting")
	})
	// A backend of the killed postmaster may still answer on a pooled
	// connection for a moment, until it sees its postmaster gone; then every
	// call is a 503 that asks to retry, never another error. (Such a
	// backend may also fail to open a file of the directory the test shut:
	// an error of the test's making, which the log names, left out below.)
	var code int
	var body map[string]any
	waitUntil(t, "an API call to be answered 503 unavailable", func() bool {
		before := strings.Count(logs.String(), "Permission denied")
		code, body = call(t, base+"/api/v1/workspaces", token)
		errBody, _ := body["error"].(map[string]any)
		if after := logs.String(); code == 500 && strings.Count(after, "Permission denied") > before && shutDirectoryFailure(after) {
			return false // this call met the shut directory
		}
		if code != 200 && code != 503 {
			t.Fatalf("an API call while the database is down: %d %v, want 503 unavailable", code, body)
		}
		return code == 503 && errBody["code"] == resolute.EUnavailable
	})

	os.Chmod(pgData, 0o700)
	waitUntil(t, "the API to serve again", func() bool { code, _ := call(t, base+"/api/v1/workspaces", token); return code == 200 })
	waitUntil(t, "/health to say the database is back", func() bool {
		code, health := call(t, base+"/health", "")
		return code == 200 && health["database"] == "ok"
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, `msg="embedded database exited; restarting it"`); n != 1 {
		t.Errorf("the death was logged %d times", n)
	}
	// Between the chmod and the kill a backend may fail to open a file it
	// had not opened yet: that is the test shutting the directory, not the
	// outage, and is left out.
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if !shutDirectoryFailure(l) {
			lines = append(lines, l)
		}
	}
	for _, noise := range []string{`msg="request failed"`, `msg="admission cycle"`, `msg="store task logs"`} {
		if strings.Contains(strings.Join(lines, "\n"), noise) {
			t.Errorf("the outage was logged as %s:\n%s", noise, out)
		}
	}
}

// shutDirectoryFailure says whether the master's log names a statement
// that failed because the test shut PostgreSQL's data directory (chmod 0)
// under a backend still running: not the outage the test is about.
func shutDirectoryFailure(log string) bool {
	return strings.Contains(log, "could not open file") && strings.Contains(log, "Permission denied")
}

// BenchmarkServingAgainAfterThePostmasterIsKilled reports the time from
// SIGKILL of the embedded PostgreSQL's postmaster until an API call that
// reads the database answers 200 again (ms/kill).
func BenchmarkServingAgainAfterThePostmasterIsKilled(b *testing.B) {
	dataDir := embeddedDataDir(b)
	addr, stop := start(b, "--data-dir", dataDir, "--port", freePort(b), "--tasks-port", freePort(b))
	defer stop()
	base := "http://" + addr
	token := login(b, base)
	pgData := filepath.Join(dataDir, "postgres", "data")
	var total time.Duration
	for b.Loop() {
		old := postmasterPID(b, pgData)
		begin := time.Now()
		killPostmaster(b, pgData)
		waitUntil(b, "the API to serve again", func() bool {
			// Not a backend of the old one answering before it notices
			// its postmaster gone: the new postmaster runs.
			code, _ := call(b, base+"/api/v1/workspaces", token)
			pid := postmasterPID(b, pgData)
			return code == 200 && pid != 0 && pid != old
		})
		total += time.Since(begin)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/kill")
}

// embeddedDataDir is a data_dir the postgres user can reach when we are root.
func embeddedDataDir(t testing.TB) string {
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "resolute-run-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "data")
}

// killPostmaster kills the server of a PostgreSQL data directory with
// SIGKILL.
func killPostmaster(t testing.TB, pgData string) {
	t.Helper()
	pid := postmasterPID(t, pgData)
	if pid == 0 {
		t.Fatal("no postmaster runs")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// postmasterPID is the pid in postmaster.pid when that process runs, else 0.
func postmasterPID(t testing.TB, pgData string) int {
	b, err := os.ReadFile(filepath.Join(pgData, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

func login(t testing.TB, base string) string {
	t.Helper()
	body, _ := json.Marshal(resolute.LoginRequest{Username: "admin"})
	resp, err := http.Post(base+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out resolute.LoginResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	return out.Token
}

// call GETs url with a bearer token and returns the status and JSON body.
func call(t testing.TB, url, token string) (int, map[string]any) {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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
