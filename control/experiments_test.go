package control_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
)

// fakeRM records launches and kills; tests play the tasks.
type fakeRM struct {
	mu        sync.Mutex
	total     int
	held      map[string][]int
	launched  []resolute.LaunchSpec
	killed    []string
	recovered []resolute.RecoveredAllocation // what Recover finds
}

var _ control.ResourceManager = (*fakeRM)(nil)

// Agents is one machine with total slots, whatever the pool.
func (f *fakeRM) Agents(string) []resolute.Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := resolute.Agent{ID: "machine"}
	for id := range f.total {
		a.Slots = append(a.Slots, resolute.Slot{ID: id, Device: "cpu"})
	}
	for alloc, ids := range f.held {
		for _, id := range ids {
			if id < f.total {
				a.Slots[id].AllocationID = alloc
			}
		}
	}
	return []resolute.Agent{a}
}

func (f *fakeRM) SlotType() string { return "cpu" }

func (f *fakeRM) ListenAddr() string { return "127.0.0.1" }

func (f *fakeRM) Events() <-chan resolute.AllocationEvent { return nil }

func (f *fakeRM) Exec(context.Context, string, []string, bool) (resolute.Stream, error) {
	return nil, resolute.Errorf(resolute.ENotFound, "no terminals here")
}

func (f *fakeRM) Recover(context.Context) ([]resolute.RecoveredAllocation, error) {
	return f.recovered, nil
}

func (f *fakeRM) Close() error { return nil }

func (f *fakeRM) Launch(_ context.Context, s resolute.LaunchSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[s.AllocationID] = s.Slots
	f.launched = append(f.launched, s)
	return nil
}

func (f *fakeRM) Kill(_ context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = append(f.killed, id)
	return nil
}

// release frees an allocation's slots, as the real one does on exit.
func (f *fakeRM) release(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, id)
}

func (f *fakeRM) running() []resolute.LaunchSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []resolute.LaunchSpec
	for _, s := range f.launched {
		if _, ok := f.held[s.AllocationID]; ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AllocationID < out[j].AllocationID })
	return out
}

type harness struct {
	t     *testing.T
	db    *db.DB
	rm    *fakeRM
	run   *control.Runner
	x     *control.Experiments // run.Experiments
	ctx   context.Context
	admin authz.Actor // owns the experiments harness.create makes
	// skew moves the runner's clock (WithClock) ahead of the real one.
	skew time.Duration
}

func newHarness(t *testing.T, slots int) *harness {
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	defaults, _ := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
	rm := &fakeRM{total: slots, held: map[string][]int{}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &harness{t: t, db: d, rm: rm, ctx: ctx, admin: authz.User(admin.User)}
	h.run = control.NewRunner(d, control.NewConfigs(d, defaults), rm,
		control.RunOptions{MasterURL: "http://m", ClusterID: "c", WorkRoot: t.TempDir()}, logger,
		control.WithClock(func() time.Time { return time.Now().Add(h.skew) }))
	h.x = h.run.Experiments
	return h
}

// admit runs one admission pass.
func (h *harness) admit() {
	h.t.Helper()
	if err := control.Cycle(h.run.Admission, h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// exit ends a running allocation as its process would.
func (h *harness) exit(id string, code int) {
	h.t.Helper()
	h.rm.release(id)
	if err := h.run.Admission.AllocationExited(h.ctx, id, &code, ""); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) trialOf(spec resolute.LaunchSpec) int64 {
	var id int64
	for _, c := range strings.TrimPrefix(strings.Split(spec.TaskID, ".")[0], "trial-") {
		id = id*10 + int64(c-'0')
	}
	return id
}

func (h *harness) experiment(id int64) resolute.Experiment {
	e, err := h.db.Experiment(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

func (h *harness) create(yaml string) resolute.Experiment {
	h.t.Helper()
	e, err := h.x.Create(h.ctx, h.admin, control.CreateRequest{ConfigYAML: yaml})
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

const single = `
name: one
entrypoint: python3 train.py
hyperparameters: {lr: 0.1}
searcher: {name: single, metric: loss}
max_restarts: 1
`

func TestASingleTrialRunsToCompletion(t *testing.T) {
	h := newHarness(t, 2)
	e := h.create(single)
	h.admit()
	run := h.rm.running()
	if len(run) != 1 || len(run[0].Slots) != 1 {
		t.Fatalf("launched %+v", run)
	}
	env := run[0].Env
	for _, k := range []string{"DET_MASTER", "DET_SESSION_TOKEN", "DET_TRIAL_ID", "DET_EXPERIMENT_ID", "DET_HPARAMS", "DET_EXPERIMENT_CONFIG", "DET_TRIAL_RUN_ID"} {
		if env[k] == "" {
			t.Errorf("env lacks %s", k)
		}
	}
	if env["DET_HPARAMS"] != `{"lr": 0.1}` || run[0].Shell != "python3 train.py" {
		t.Errorf("hparams %s, shell %q", env["DET_HPARAMS"], run[0].Shell)
	}
	if err := h.x.ValidationReported(h.ctx, h.trialOf(run[0]), 1, 1, map[string]any{"loss": 0.5}); err != nil {
		t.Fatal(err)
	}
	h.exit(run[0].AllocationID, 0)
	got := h.experiment(e.ID)
	if got.State != resolute.StateCompleted || got.BestValidation == nil || *got.BestValidation != 0.5 {
		t.Fatalf("experiment %s best %v", got.State, got.BestValidation)
	}
}

func TestAFailedTrialRestartsUntilMaxRestartsThenErrors(t *testing.T) {
	h := newHarness(t, 1)
	e := h.create(single)
	h.admit()
	first := h.rm.running()[0]
	h.exit(first.AllocationID, 1)
	h.admit()
	second := h.rm.running()
	if len(second) != 1 || second[0].Env["DET_TRIAL_RUN_ID"] != "2" {
		t.Fatalf("restart: %+v", second)
	}
	h.exit(second[0].AllocationID, 1)
	h.admit()
	if r := h.rm.running(); len(r) != 0 {
		t.Fatalf("a third run after max_restarts 1: %+v", r)
	}
	if got := h.experiment(e.ID); got.State != resolute.StateError || got.Restarts != 2 {
		t.Fatalf("experiment %s restarts %d", got.State, got.Restarts)
	}
}

func TestPauseCheckpointsThenActivateResumes(t *testing.T) {
	h := newHarness(t, 1)
	e := h.create(single)
	h.admit()
	a := h.rm.running()[0]
	if err := h.x.SetState(h.ctx, authz.System, e.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	if p, _ := h.run.Admission.ShouldPreempt(h.ctx, a.AllocationID); !p {
		t.Fatal("the paused trial is not asked to preempt")
	}
	h.exit(a.AllocationID, 0)
	if got := h.experiment(e.ID); got.State != resolute.StatePaused {
		t.Fatalf("after pause: %s", got.State)
	}
	trials, _ := h.db.Trials(h.ctx, e.ID)
	if trials[0].State != resolute.StatePaused {
		t.Fatalf("trial %s", trials[0].State)
	}
	if err := h.x.SetState(h.ctx, authz.System, e.ID, "activate"); err != nil {
		t.Fatal(err)
	}
	h.admit()
	if r := h.rm.running(); len(r) != 1 || r[0].Env["DET_TRIAL_RUN_ID"] != "2" {
		t.Fatalf("after activate: %+v", r)
	}
	if got := h.experiment(e.ID); got.Restarts != 0 {
		t.Fatalf("pausing used up restarts: %d", got.Restarts)
	}
}

// TestActivatingBeforeThePausedRunExitsStartsNothingBesideIt: a pause asks the
// running trial to checkpoint and exit; an activate that comes before it has
// exited must not start a second run beside it (its reports would be refused
// as a stale run's). The run's exit, a preempted run of an active
// experiment, queues the next one, which resumes from its checkpoint.
func TestActivatingBeforeThePausedRunExitsStartsNothingBesideIt(t *testing.T) {
	h := newHarness(t, 2)
	e := h.create(single)
	h.admit()
	a := h.rm.running()[0]
	if err := h.x.SetState(h.ctx, authz.System, e.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	if err := h.x.SetState(h.ctx, authz.System, e.ID, "activate"); err != nil {
		t.Fatal(err)
	}
	h.admit()
	if r := h.rm.running(); len(r) != 1 || r[0].AllocationID != a.AllocationID {
		t.Fatalf("activated while the paused run still runs: %+v", r)
	}
	h.exit(a.AllocationID, 0)
	h.admit()
	r := h.rm.running()
	if len(r) != 1 || r[0].Env["DET_TRIAL_RUN_ID"] != "2" {
		t.Fatalf("after the paused run exited: %+v", r)
	}
	if got := h.experiment(e.ID); got.State != resolute.StateActive || got.Restarts != 0 {
		t.Fatalf("experiment %s restarts %d", got.State, got.Restarts)
	}
}

func TestCancelAndKill(t *testing.T) {
	h := newHarness(t, 1)
	e1 := h.create(single)
	e2 := h.create(single)
	h.admit()
	running := h.rm.running()
	if len(running) != 1 {
		t.Fatalf("one slot, %d running", len(running))
	}
	// The second waits; canceling it ends it at once.
	if err := h.x.SetState(h.ctx, authz.System, e2.ID, "cancel"); err != nil {
		t.Fatal(err)
	}
	if got := h.experiment(e2.ID); got.State != resolute.StateCanceled {
		t.Fatalf("canceled while waiting: %s", got.State)
	}
	if err := h.x.SetState(h.ctx, authz.System, e1.ID, "kill"); err != nil {
		t.Fatal(err)
	}
	h.admit()
	if len(h.rm.killed) != 1 || h.rm.killed[0] != running[0].AllocationID {
		t.Fatalf("killed %v", h.rm.killed)
	}
	h.exit(running[0].AllocationID, 137)
	if got := h.experiment(e1.ID); got.State != resolute.StateCanceled || got.Restarts != 0 {
		t.Fatalf("killed: %s restarts %d", got.State, got.Restarts)
	}
	if err := h.x.SetState(h.ctx, authz.System, e1.ID, "activate"); resolute.ErrorCode(err) != resolute.EConflict {
		t.Fatalf("activating a canceled experiment: %v", err)
	}
}

const asha = `
name: asha
entrypoint: python3 train.py
hyperparameters: {lr: {type: double, minval: 0.01, maxval: 1}}
searcher: {name: adaptive_asha, metric: loss, max_trials: 16, max_time: 64, time_metric: batches, divisor: 4, max_rungs: 3, max_concurrent_trials: 4}
`

// TestAnASHASearchRunsToTheEnd plays every trial: each reports its loss at
// each rung target until the searcher (name: adaptive_asha) stops it.
func TestAnASHASearchRunsToTheEnd(t *testing.T) {
	h := newHarness(t, 4)
	e := h.create(asha)
	stopsAt := map[string]bool{}
	for round := 0; round < 200; round++ {
		h.admit()
		running := h.rm.running()
		if len(running) == 0 {
			break
		}
		for _, a := range running {
			trial := h.trialOf(a)
			pre, _ := h.run.Admission.ShouldPreempt(h.ctx, a.AllocationID)
			if pre || stopsAt[a.AllocationID] {
				h.exit(a.AllocationID, 0)
				continue
			}
			runID, _ := strconv.Atoi(a.Env["DET_TRIAL_RUN_ID"])
			for _, b := range []int{4, 16, 64} {
				loss := float64(trial%7) + 1/float64(b)
				if err := h.x.ValidationReported(h.ctx, trial, runID, int64(b), map[string]any{"loss": loss, "batches": b}); err != nil {
					t.Fatal(err)
				}
				if pre, _ := h.run.Admission.ShouldPreempt(h.ctx, a.AllocationID); pre {
					break
				}
			}
			stopsAt[a.AllocationID] = true
		}
	}
	got := h.experiment(e.ID)
	if got.State != resolute.StateCompleted || got.NumTrials != 16 || got.Progress < 0.99 {
		t.Fatalf("experiment %s, %d trials, progress %.2f", got.State, got.NumTrials, got.Progress)
	}
}

func TestAForkTakesItsParentsConfigAndContext(t *testing.T) {
	h := newHarness(t, 1)
	parent := h.create(single)
	child, err := h.x.Create(h.ctx, h.admin, control.CreateRequest{ParentID: &parent.ID, Overrides: []string{"max_restarts=3"}})
	if err != nil {
		t.Fatal(err)
	}
	if child.Name != parent.Name || child.ParentID == nil || *child.ParentID != parent.ID || child.ProjectID != parent.ProjectID {
		t.Fatalf("fork %+v", child)
	}
	var cfg struct {
		MaxRestarts int `json:"max_restarts"`
	}
	json.Unmarshal(child.Config, &cfg)
	if cfg.MaxRestarts != 3 {
		t.Fatalf("the fork's override is lost: %d", cfg.MaxRestarts)
	}
}

func TestRecoveryKeepsTheLivingEndsTheFinishedAndRequeuesTheLost(t *testing.T) {
	h := newHarness(t, 3)
	alive, finished, lost := h.create(single), h.create(single), h.create(single)
	h.admit()
	run := h.rm.running()
	if len(run) != 3 {
		t.Fatalf("running %d", len(run))
	}
	byExp := map[int64]string{}
	for _, r := range run {
		byExp[h.trialExperiment(r)] = r.AllocationID
	}
	// The master restarts: one task still runs, one finished while it was
	// down (status 0), one is gone without a trace.
	for _, r := range run {
		h.rm.release(r.AllocationID)
	}
	h.rm.held[byExp[alive.ID]] = []int{0}
	h.rm.recovered = []resolute.RecoveredAllocation{{AllocationID: byExp[alive.ID], Running: true}, {AllocationID: byExp[finished.ID], ExitCode: 0}}
	if err := h.run.Admission.Recover(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.experiment(finished.ID); got.State != resolute.StateCompleted {
		t.Errorf("finished while down: %s", got.State)
	}
	if got := h.experiment(alive.ID); got.State != resolute.StateActive {
		t.Errorf("alive: %s", got.State)
	}
	h.admit()
	var relaunched bool
	for _, r := range h.rm.running() {
		if h.trialExperiment(r) == lost.ID && r.Env["DET_TRIAL_RUN_ID"] == "2" {
			relaunched = true
		}
	}
	if got := h.experiment(lost.ID); !relaunched || got.Restarts != 0 {
		t.Errorf("lost: relaunched %v, restarts %d", relaunched, got.Restarts)
	}
}

func (h *harness) trialExperiment(s resolute.LaunchSpec) int64 {
	t, err := h.db.Trial(h.ctx, h.trialOf(s))
	if err != nil {
		h.t.Fatal(err)
	}
	return t.ExperimentID
}

func (f *fakeRM) CheckContainer(resolute.ContainerSettings) error { return nil }
