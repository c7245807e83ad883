// Package mastertest runs the master as a process for end-to-end tests:
// built from cmd/server, started with a config, called over HTTP with a
// bearer token, stopped and started again. It is imported by tests only.
package mastertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// Master is a resolute process.
type Master struct {
	t    testing.TB
	bin  string
	args []string
	cmd  *exec.Cmd
	// URL is where the master serves, http://localhost:PORT.
	URL  string
	Port int
	// TasksURL is the task origin, http://127.0.0.1:TASKS_PORT (another
	// host, as the master's default has it).
	TasksURL  string
	TasksPort int
	// TaskUIDBase is its task_uid_base, one of its own
	// (handlerstest.NewTaskUIDBase), kept across restarts.
	TaskUIDBase int

	mu  sync.Mutex
	out bytes.Buffer
}

// Build builds the master into a temporary directory and returns the
// binary's path.
func Build(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "resolute")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/server")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TempDir is a temporary directory for a master's data_dir: tasks run as
// their owners' Unix users and must pass through it to their work dirs,
// the harness and checkpoint storage (t.TempDir's parent is mode 0700, and
// the master refuses such a data_dir). It is removed when t ends.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "resolute-e2e-")
	if err == nil {
		err = os.Chmod(dir, 0o711)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// New returns a master of bin on free ports, not yet started; args come
// before the --port and --tasks-port flags it adds.
func New(t testing.TB, bin string, args ...string) *Master {
	port, tasksPort := freePort(t), freePort(t)
	m := &Master{t: t, bin: bin, Port: port, URL: fmt.Sprintf("http://localhost:%d", port),
		TasksPort: tasksPort, TasksURL: fmt.Sprintf("http://127.0.0.1:%d", tasksPort), TaskUIDBase: handlerstest.NewTaskUIDBase()}
	m.SetArgs(args...)
	t.Cleanup(m.Stop)
	return m
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// SetArgs replaces the flags of the master's next Start (its ports and
// task_uid_base stay).
func (m *Master) SetArgs(args ...string) {
	m.args = append(args, "--port", fmt.Sprint(m.Port), "--tasks-port", fmt.Sprint(m.TasksPort),
		"--task-uid-base", fmt.Sprint(m.TaskUIDBase))
}

// Write collects the master's output.
func (m *Master) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.out.Write(p)
}

// Output is what the master printed so far.
func (m *Master) Output() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.out.String()
}

// PID is the running master's process id.
func (m *Master) PID() int { return m.cmd.Process.Pid }

// Start starts the master and waits until /health answers.
func (m *Master) Start() {
	m.t.Helper()
	m.cmd = exec.Command(m.bin, m.args...)
	m.cmd.Stdout, m.cmd.Stderr = m, m
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(m.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	m.t.Fatalf("master did not start:\n%s", m.Output())
}

// Stop stops the master with SIGTERM and waits for it.
func (m *Master) Stop() {
	if m.cmd != nil && m.cmd.ProcessState == nil {
		m.cmd.Process.Signal(syscall.SIGTERM)
		m.cmd.Wait()
	}
}

// Kill kills the master outright (SIGKILL), as a crash would.
func (m *Master) Kill() {
	if m.cmd != nil && m.cmd.ProcessState == nil {
		m.cmd.Process.Signal(syscall.SIGKILL)
		m.cmd.Wait()
	}
}

// Login signs in as a user without a password and returns its token.
func (m *Master) Login(user string) string {
	var login resolute.LoginResponse
	m.Call("POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: user}, &login)
	return login.Token
}

// Call sends body as JSON and decodes the answer into out; it returns the
// status code.
func (m *Master) Call(method, path, token string, body, out any) int {
	m.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, m.URL+path, r)
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

// Get returns the body of a GET.
func (m *Master) Get(path, token string) string {
	m.t.Helper()
	req, _ := http.NewRequest("GET", m.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// OpenTask opens a notebook's or TensorBoard's page as token's user does in
// a browser: a ticket from POST /api/v1/tasks/{id}/open, redeemed on the
// task origin. The client it returns holds the task cookie.
func (m *Master) OpenTask(token, id string) *http.Client {
	m.t.Helper()
	var open resolute.OpenTaskResponse
	if code := m.Call("POST", "/api/v1/tasks/"+id+"/open", token, nil, &open); code != 200 {
		m.t.Fatalf("open task %s: %d", id, code)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(open.URL)
	if err != nil {
		m.t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

// TaskGet returns the body of a GET of path on the task origin with c.
func (m *Master) TaskGet(c *http.Client, path string) string {
	m.t.Helper()
	resp, err := c.Get(m.TasksURL + path)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// CreateExperiment submits an experiment with the files of dir as its code
// and returns its id.
func (m *Master) CreateExperiment(token, config, dir string) int64 {
	m.t.Helper()
	var created resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: config},
		ContextTgz: PackDir(m.t, dir)}
	if code := m.Call("POST", "/api/v1/experiments", token, req, &created); code != 200 {
		m.t.Fatalf("create experiment: %d\n%s", code, m.Output())
	}
	return created.Experiment.ID
}

// Experiment reads an experiment.
func (m *Master) Experiment(token string, id int64) resolute.Experiment {
	var e resolute.ExperimentResponse
	m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d", id), token, nil, &e)
	return e.Experiment
}

// WaitDone waits until an experiment ends and returns it.
func (m *Master) WaitDone(token string, id int64, within time.Duration) resolute.Experiment {
	m.t.Helper()
	deadline := time.Now().Add(within)
	for {
		e := m.Experiment(token, id)
		if resolute.Terminal(e.State) {
			return e
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("experiment %d still %s after %s\n%s", id, e.State, within, m.Output())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// Trials lists an experiment's trials.
func (m *Master) Trials(token string, id int64) []resolute.Trial {
	var trials resolute.TrialsResponse
	m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d/trials", id), token, nil, &trials)
	return trials.Trials
}

// Validations lists "trial/steps" of every stored validation report of an
// experiment.
func (m *Master) Validations(token string, id int64) map[string]bool {
	out := map[string]bool{}
	for _, tr := range m.Trials(token, id) {
		var ms resolute.MetricsResponse
		m.Call("GET", fmt.Sprintf("/api/v1/trials/%d/metrics?group=validation", tr.ID), token, nil, &ms)
		for _, r := range ms.Metrics {
			out[fmt.Sprintf("%d/%d", tr.ID, r.StepsCompleted)] = true
		}
	}
	return out
}

// Metrics lists a trial's stored reports of group (training or
// validation).
func (m *Master) Metrics(token string, trialID int64, group string) []resolute.MetricsReport {
	var ms resolute.MetricsResponse
	m.Call("GET", fmt.Sprintf("/api/v1/trials/%d/metrics?group=%s", trialID, group), token, nil, &ms)
	return ms.Metrics
}

// Checkpoints lists an experiment's checkpoints.
func (m *Master) Checkpoints(token string, id int64) []resolute.Checkpoint {
	var cs resolute.CheckpointsResponse
	m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d/checkpoints", id), token, nil, &cs)
	return cs.Checkpoints
}

// PackDir is a gzipped tar of dir as det packs a context directory.
func PackDir(t testing.TB, dir string) []byte {
	t.Helper()
	c, err := client.ScanContext(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteTarGz(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// SteadyTrial is the directory of the Core API trial that reports
// training metrics at every step and checkpoints every few
// (e2e/testdata/steady-trial).
func SteadyTrial() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "steady-trial")
}

// SlowTrial is the directory of the slow Core API trial the end-to-end
// tests run (e2e/testdata/slow-trial).
func SlowTrial() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "slow-trial")
}
