package e2e

import (
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
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

// TestKillingTheMasterMidSearchLosesNothing kills the master with SIGKILL
// in the middle of an ASHA search and starts it again: the search finishes
// with every trial, and every validation reported before the kill is kept.
func TestKillingTheMasterMidSearchLosesNothing(t *testing.T) {
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", filepath.Join(mastertest.TempDir(t), "data"), "--resource-manager-slots", "4",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable")
	m.Start()
	token := m.Login("admin")
	id := m.CreateExperiment(token, restartConfig, mastertest.SlowTrial())

	// Wait until trials have reported, then kill the master outright.
	before := waitValidations(t, m, token, id, 6)
	m.Kill()
	time.Sleep(time.Second)
	m.Start()

	e := m.WaitDone(token, id, 3*time.Minute)
	if e.State != resolute.StateCompleted || e.NumTrials != 8 {
		t.Fatalf("after the restart: %s with %d trials\n%s", e.State, e.NumTrials, m.Output())
	}
	after := m.Validations(token, id)
	for key := range before {
		if !after[key] {
			t.Errorf("validation %s reported before the kill is gone", key)
		}
	}
}

func waitValidations(t *testing.T, m *mastertest.Master, token string, id int64, n int) map[string]bool {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if v := m.Validations(token, id); len(v) >= n {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %d validations within a minute:\n%s", n, m.Output())
	return nil
}
