package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/postgres"
)

// steadyConfig is one trial of the steady trial: a training report every
// step, a validation and a checkpoint every 5, every checkpoint kept. No
// restarts: the trial must live through the outage, not be run again.
const steadyConfig = `
name: steady
entrypoint: python3 train.py
hyperparameters:
  max_steps: %d
  step_seconds: 0.2
  checkpoint_every: 5
searcher: {name: single, metric: loss}
checkpoint_storage:
  type: shared_fs
  host_path: %s
  save_experiment_best: 100
  save_trial_best: 100
  save_trial_latest: 100
max_restarts: 0
`

const steadySteps = 60

// TestKillingThePostmasterMidExperimentLosesNothing kills the embedded
// PostgreSQL's postmaster with SIGKILL while a trial reports: the master
// restarts it and serves again (the time it takes is the figure printed),
// the trial lives through it, and every training report, validation and
// checkpoint is stored.
func TestKillingThePostmasterMidExperimentLosesNothing(t *testing.T) {
	m, dataDir, storage := embeddedMaster(t)
	m.Start()
	token := m.Login("admin")
	id := m.CreateExperiment(token, fmt.Sprintf(steadyConfig, steadySteps, storage), mastertest.SteadyTrial())
	trial := waitTrainingSteps(t, m, token, id, 10)

	pgData := filepath.Join(dataDir, "postgres", "data")
	old := postmasterPID(pgData)
	killed := time.Now()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	for {
		// Not a backend of the old postmaster answering before it sees
		// its postmaster gone: a new postmaster runs.
		code := m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d", id), token, nil, nil)
		statuses[code]++
		if pid := postmasterPID(pgData); code == 200 && pid != 0 && pid != old {
			break
		}
		if time.Since(killed) > time.Minute {
			t.Fatalf("the master does not serve a minute after its postmaster was killed: %v\n%s", statuses, m.Output())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("FIGURE: the master served again %v after SIGKILL of its postmaster (answers meanwhile: %v)",
		time.Since(killed).Round(time.Millisecond), statuses)
	for code := range statuses {
		if code != 200 && code != 503 {
			t.Errorf("answered %d while the database was down (%v); want 503", code, statuses)
		}
	}

	expectAllStored(t, m, token, id, trial, storage)
	out := m.Output()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "embedded database") {
			t.Log(line)
		}
	}
	for want, n := range map[string]int{`msg="embedded database exited; restarting it"`: 1, `msg="embedded database is back"`: 1,
		`msg="embedded database did not start again; retrying"`: 0} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%s logged %d times, want %d", want, got, n)
		}
	}
	if !strings.Contains(out, "change notifications: listening again") {
		t.Errorf("the live updates did not listen again:\n%s", out)
	}
	if strings.Contains(out, `msg="request failed"`) {
		t.Errorf("the outage was logged as failed requests:\n%s", out)
	}
}

// TestKillingTheMasterAndStartingItAtOnceLosesNothing kills the master
// with SIGKILL while a trial reports and starts it again at once on the
// same data directory: the new master waits for the old postmaster to
// finish shutting down, adopts the trial, and nothing is lost.
func TestKillingTheMasterAndStartingItAtOnceLosesNothing(t *testing.T) {
	m, _, storage := embeddedMaster(t)
	m.Start()
	token := m.Login("admin")
	id := m.CreateExperiment(token, fmt.Sprintf(steadyConfig, steadySteps, storage), mastertest.SteadyTrial())
	trial := waitTrainingSteps(t, m, token, id, 10)

	killed := time.Now()
	m.Kill()
	m.Start()
	t.Logf("the new master served %v after the old one was killed", time.Since(killed).Round(time.Millisecond))
	token = m.Login("admin")

	expectAllStored(t, m, token, id, trial, storage)
	out := m.Output()
	if !strings.Contains(out, "adopted allocation that survived the restart") {
		t.Errorf("the trial was not adopted:\n%s", out)
	}
	if strings.Contains(out, "waiting for the embedded database of an earlier run") {
		t.Logf("the new master waited for the old postmaster")
	} else {
		t.Logf("the old postmaster was gone before the new master looked")
	}
}

// embeddedMaster is a master on its own embedded database in a fresh data
// directory (reachable by the postgres user when we are root), not started
// yet, and a directory for checkpoints.
func embeddedMaster(t *testing.T) (m *mastertest.Master, dataDir, storage string) {
	t.Helper()
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "resolute-e2e-db-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	dataDir = filepath.Join(dir, "data")
	// The experiment's own storage, which its trial writes as its owner's
	// Unix user: shared as /tmp is.
	storage = filepath.Join(dir, "checkpoints")
	if err := os.Mkdir(storage, 0o777); err != nil || os.Chmod(storage, os.ModeSticky|0o777) != nil {
		t.Fatal(err)
	}
	m = mastertest.New(t, mastertest.Build(t), "--data-dir", dataDir, "--resource-manager-slots", "1")
	return m, dataDir, storage
}

// waitTrainingSteps waits until the experiment's one trial reported n
// training steps, and returns the trial's id.
func waitTrainingSteps(t *testing.T, m *mastertest.Master, token string, id int64, n int) int64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if trials := m.Trials(token, id); len(trials) == 1 && len(m.Metrics(token, trials[0].ID, "training")) >= n {
			return trials[0].ID
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %d training reports within 2 minutes:\n%s", n, m.Output())
	return 0
}

// expectAllStored waits for the experiment to complete and checks that its
// trial ran once and that every report and checkpoint of it is stored.
func expectAllStored(t *testing.T, m *mastertest.Master, token string, id, trial int64, storage string) {
	t.Helper()
	e := m.WaitDone(token, id, 3*time.Minute)
	if e.State != resolute.StateCompleted {
		t.Fatalf("the experiment ended %s\n%s", e.State, m.Output())
	}
	for _, tr := range m.Trials(token, id) {
		if tr.Restarts != 0 || tr.RunID > 1 {
			t.Errorf("trial %d ran %d times (%d restarts): it should have lived through", tr.ID, tr.RunID, tr.Restarts)
		}
	}
	steps := map[int64]int{}
	for _, r := range m.Metrics(token, trial, "training") {
		steps[r.StepsCompleted]++
	}
	for s := int64(1); s <= steadySteps; s++ {
		if steps[s] != 1 {
			t.Errorf("training step %d stored %d times", s, steps[s])
		}
	}
	if n := len(m.Metrics(token, trial, "validation")); n != steadySteps/5 {
		t.Errorf("%d validations stored, want %d", n, steadySteps/5)
	}
	stored := map[int64]bool{}
	for _, c := range m.Checkpoints(token, id) {
		if c.State != resolute.StateCompleted {
			t.Errorf("checkpoint at step %d is %s", c.StepsCompleted, c.State)
		}
		if _, err := os.Stat(filepath.Join(storage, c.UUID, "state.json")); err != nil {
			t.Errorf("checkpoint at step %d: %v", c.StepsCompleted, err)
		}
		stored[c.StepsCompleted] = true
	}
	for s := int64(5); s <= steadySteps; s += 5 {
		if !stored[s] {
			t.Errorf("no checkpoint at step %d (have %v)", s, stored)
		}
	}
}

// postmasterPID is the pid in a data directory's postmaster.pid while that
// process runs, else 0.
func postmasterPID(pgData string) int {
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
