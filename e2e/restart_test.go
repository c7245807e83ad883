package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
)

const restartConfig = `
name: restart
entrypoint: python3 train.py
hyperparameters:
  x: {type: double, minval: 0, maxval: 10}
  max_steps: 32
  validate_every: 2
  step_seconds: 0.1
searcher:
  name: adaptive_asha
  metric: loss
  max_trials: 8
  max_time: 32
  time_metric: batches
  divisor: 4
  max_rungs: 3
  max_concurrent_trials: 4
max_restarts: 0
`

// master is a resolute process started from the built binary.
type master struct {
	t    *testing.T
	bin  string
	args []string
	cmd  *exec.Cmd
	url  string
	out  bytes.Buffer
}

func (m *master) start() {
	m.t.Helper()
	m.cmd = exec.Command(m.bin, m.args...)
	m.cmd.Stdout, m.cmd.Stderr = &m.out, &m.out
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(m.url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	m.t.Fatalf("master did not start:\n%s", m.out.String())
}

func (m *master) call(method, path, token string, body, out any) int {
	m.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, m.url+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// TestKillingTheMasterMidSearchLosesNothing kills the master with SIGKILL
// in the middle of an ASHA search and starts it again: the search finishes
// with every trial, and every validation reported before the kill is kept.
func TestKillingTheMasterMidSearchLosesNothing(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "resolute")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	m := &master{t: t, bin: bin, url: fmt.Sprintf("http://localhost:%d", port), args: []string{
		"--port", fmt.Sprint(port), "--data-dir", filepath.Join(dir, "data"), "--resource-manager-slots", "4",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable",
	}}
	m.start()
	defer func() {
		if m.cmd.Process != nil {
			m.cmd.Process.Signal(syscall.SIGTERM)
			m.cmd.Wait()
		}
	}()
	var login resolute.LoginResponse
	m.call("POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: "admin"}, &login)
	var created resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: restartConfig},
		ContextTgz: packDir(t, "testdata/slow-trial")}
	if code := m.call("POST", "/api/v1/experiments", login.Token, req, &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	id := created.Experiment.ID

	// Wait until trials have reported, then kill the master outright.
	before := waitValidations(t, m, login.Token, id, 6)
	m.cmd.Process.Signal(syscall.SIGKILL)
	m.cmd.Wait()
	time.Sleep(time.Second)
	m.start()

	deadline := time.Now().Add(3 * time.Minute)
	var e resolute.ExperimentResponse
	for time.Now().Before(deadline) {
		m.call("GET", fmt.Sprintf("/api/v1/experiments/%d", id), login.Token, nil, &e)
		if resolute.Terminal(e.Experiment.State) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if e.Experiment.State != resolute.StateCompleted || e.Experiment.NumTrials != 8 {
		t.Fatalf("after the restart: %s with %d trials\n%s", e.Experiment.State, e.Experiment.NumTrials, m.out.String())
	}
	after := validations(t, m, login.Token, id)
	for key := range before {
		if !after[key] {
			t.Errorf("validation %s reported before the kill is gone", key)
		}
	}
}

// validations lists "trial/step" of every stored validation report.
func validations(t *testing.T, m *master, token string, id int64) map[string]bool {
	var trials resolute.TrialsResponse
	m.call("GET", fmt.Sprintf("/api/v1/experiments/%d/trials", id), token, nil, &trials)
	out := map[string]bool{}
	for _, tr := range trials.Trials {
		var ms resolute.MetricsResponse
		m.call("GET", fmt.Sprintf("/api/v1/trials/%d/metrics?group=validation", tr.ID), token, nil, &ms)
		for _, r := range ms.Metrics {
			out[fmt.Sprintf("%d/%d", tr.ID, r.StepsCompleted)] = true
		}
	}
	return out
}

func waitValidations(t *testing.T, m *master, token string, id int64, n int) map[string]bool {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if v := validations(t, m, token, id); len(v) >= n {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %d validations within a minute:\n%s", n, m.out.String())
	return nil
}

func packDir(t *testing.T, dir string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}
