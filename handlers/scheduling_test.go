package handlers_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/scheduler"
)

// slowConfig is e2e/testdata/slow-trial: steps of step_seconds, a
// validation and checkpoint every validate_every steps, resumes, stops when
// preempted.
func slowConfig(name string, priority, slots, steps int) string {
	return fmt.Sprintf(`
name: %s
entrypoint: python3 train.py
hyperparameters: {x: 1, max_steps: %d, validate_every: 1, step_seconds: 0.05}
searcher: {name: single, metric: loss}
resources: {slots_per_trial: %d, priority: %d}
max_restarts: 0
`, name, steps, slots, priority)
}

func createSlow(t *testing.T, m *handlerstest.Master, token, cfg string) int64 {
	t.Helper()
	var e resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg},
		ContextTgz: tgz(t, "../e2e/testdata/slow-trial")}
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
		t.Fatalf("create: %d", code)
	}
	return e.Experiment.ID
}

func TestAHigherPriorityExperimentPreemptsALowerOneThatResumes(t *testing.T) {
	// Single-slot trials: a multi-slot task needs a distributed launcher, as in Determined.
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1,
		Scheduler: scheduler.Config{Type: scheduler.TypePriority, Preemption: true}})
	token := login(t, m, "admin", "")
	low := createSlow(t, m, token, slowConfig("low", 50, 1, 60))
	ctx := context.Background()
	// Wait until the low-priority trial has checkpointed a few steps.
	deadline := time.Now().Add(30 * time.Second)
	for {
		trials, _ := m.DB.Trials(ctx, low)
		if len(trials) == 1 && trials[0].StepsCompleted >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the low-priority trial did not start: %+v", trials)
		}
		time.Sleep(50 * time.Millisecond)
	}
	high := createSlow(t, m, token, slowConfig("high", 10, 1, 5))

	e := waitFor(t, m, token, high, 60*time.Second)
	if e.State != resolute.StateCompleted {
		t.Fatalf("high-priority experiment: %s", e.State)
	}
	lowE := waitFor(t, m, token, low, 90*time.Second)
	if lowE.State != resolute.StateCompleted || lowE.Restarts != 0 {
		t.Fatalf("low-priority experiment: %s, restarts %d", lowE.State, lowE.Restarts)
	}
	trials, _ := m.DB.Trials(ctx, low)
	allocs, _ := m.DB.TrialAllocations(ctx, trials[0].ID)
	if len(allocs) < 2 || !allocs[0].Preempt {
		t.Fatalf("the low trial was not preempted and resumed: %+v", allocs)
	}
	// It resumed from its checkpoint: every step 1..60 was validated, none lost.
	reports, _ := m.DB.TrialMetrics(ctx, trials[0].ID, "validation")
	seen := map[int64]bool{}
	for _, r := range reports {
		seen[r.StepsCompleted] = true
	}
	var missing []int64
	for s := int64(1); s <= 60; s++ {
		if !seen[s] {
			missing = append(missing, s)
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	if len(missing) > 0 {
		t.Fatalf("validations lost at steps %v", missing)
	}
	// The high one ran while the low one was off its slots.
	highTrials, _ := m.DB.Trials(ctx, high)
	if highTrials[0].EndedAt == nil || allocs[1].StartedAt == nil || allocs[1].StartedAt.Before(*highTrials[0].EndedAt) {
		t.Fatalf("the low trial resumed before the high one ended")
	}
}

func TestTwoUsersShareSlotsByWeightUnderFairShare(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 8, Scheduler: scheduler.Config{Type: scheduler.TypeFairShare}})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ann"},"password":"s3cret-pw"}`, nil)
	ann := login(t, m, "ann", "s3cret-pw")
	grid := func(name string, weight int) string {
		return fmt.Sprintf(`
name: %s
entrypoint: python3 train.py
hyperparameters: {x: {type: categorical, vals: [1, 2, 3, 4, 5, 6, 7, 8]}, max_steps: 400, validate_every: 50, step_seconds: 0.05}
searcher: {name: grid, metric: loss, max_concurrent_trials: 8}
resources: {slots_per_trial: 1, weight: %d}
`, name, weight)
	}
	a := createSlow(t, m, admin, grid("admin-grid", 3))
	b := createSlow(t, m, ann, grid("ann-grid", 1))
	ctx := context.Background()
	running := func(exp int64) int {
		allocs, _ := m.DB.LiveAllocations(ctx)
		n := 0
		for _, al := range allocs {
			if al.ExperimentID == exp && al.State == resolute.AllocationRunning {
				n++
			}
		}
		return n
	}
	// Demands 8 and 8 with weights 3 and 1 on 8 slots: 6 and 2.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if running(a) == 6 && running(b) == 2 {
			api(t, m, "POST", fmt.Sprintf("/api/v1/experiments/%d/kill", a), admin, "", nil)
			api(t, m, "POST", fmt.Sprintf("/api/v1/experiments/%d/kill", b), ann, "", nil)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("running %d and %d, want 6 and 2", running(a), running(b))
}
