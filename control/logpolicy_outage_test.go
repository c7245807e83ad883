package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/postgres"
)

// TestALogPolicyLineReadDuringADatabaseOutageStillCancelsRetries: the
// pump takes a trial's line while the database is down without waiting
// for it, and once the database is back the policy the line matched is
// applied before the trial's failure is decided.
func TestALogPolicyLineReadDuringADatabaseOutageStillCancelsRetries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startPrivateDatabase(t, ctx)
	rm := &eventfulRM{fakeRM: &fakeRM{total: 1, held: map[string][]int{}}, events: make(chan resolute.AllocationEvent)}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	run := control.NewRunner(p.d, control.NewConfigs(p.d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, p.logger)
	e, err := run.Experiments.Create(ctx, authz.User(p.admin), control.CreateRequest{ConfigYAML: policyConfig})
	if err != nil {
		t.Fatal(err)
	}
	if err := control.Cycle(run.Admission, ctx); err != nil {
		t.Fatal(err)
	}
	a := rm.running()[0]
	pumped := make(chan struct{})
	go func() { run.Admission.Pump(ctx); close(pumped) }()

	p.kill(t, ctx)
	for _, line := range []string{"epoch 3", "ValueError: corrupt record 12", "giving up"} {
		select {
		case rm.events <- resolute.AllocationLog{AllocationID: a.AllocationID, Time: time.Now(), Stream: "stdout", Line: line}:
		case <-time.After(10 * time.Second):
			t.Fatalf("the pump did not take %q while the database was down", line)
		}
	}
	rm.release(a.AllocationID)
	rm.events <- resolute.AllocationExited{AllocationID: a.AllocationID, ExitCode: 1, Time: time.Now()}

	srv, err := postgres.Start(ctx, p.dir, p.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	waitUntil(t, "the experiment to end", func() bool {
		got, err := p.d.Experiment(ctx, e.ID)
		return err == nil && resolute.Terminal(got.State)
	})
	if err := control.Cycle(run.Admission, ctx); err != nil {
		t.Fatal(err)
	}
	trials, _ := p.d.Trials(ctx, e.ID)
	if got, _ := p.d.Experiment(ctx, e.ID); got.State != resolute.StateError || len(rm.running()) != 0 ||
		trials[0].LogPolicyMatched != "Bad data" || !trials[0].RetriesCancelled {
		t.Fatalf("experiment %s, running %d, trial %+v", got.State, len(rm.running()), trials[0])
	}
	cancel()
	<-pumped
}
