package handlers_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// slotHolding waits until a slot of the local agent is held by an
// allocation whose id starts with prefix, and returns its number.
func slotHolding(t *testing.T, m *handlerstest.Master, token, prefix string) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var agents resolute.AgentsResponse
		api(t, m, "GET", "/api/v1/agents", token, "", &agents)
		for _, a := range agents.Agents {
			for _, s := range a.Slots {
				if strings.HasPrefix(s.AllocationID, prefix) {
					return s.ID
				}
			}
		}
	}
	t.Fatalf("no slot held by %s*", prefix)
	return -1
}

// TestATrialOnADisabledSlotCheckpointsAndMovesToAnother: disabled without
// --drain, the slot a trial runs on is given back as in a preemption: the
// trial checkpoints, and its next run lands on the other slot and finishes
// with no step lost and no restart counted.
func TestATrialOnADisabledSlotCheckpointsAndMovesToAnother(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 2})
	token := login(t, m, "admin", "")
	id := createSlow(t, m, token, slowConfig("moves", 42, 1, 40))
	ctx := t.Context()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		trials, _ := m.DB.Trials(ctx, id)
		if len(trials) == 1 && trials[0].StepsCompleted >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trial did not start: %+v", trials)
		}
	}
	trials, _ := m.DB.Trials(ctx, id)
	task := "trial-" + strconv.FormatInt(trials[0].ID, 10)
	first := slotHolding(t, m, token, task+".1")
	var st resolute.SlotStateResponse
	if code := api(t, m, "POST", "/api/v1/agents/local/slots/"+strconv.Itoa(first)+"/disable", token, `{"drain":false}`, &st); code != 200 ||
		len(st.Allocations) != 1 || st.Allocations[0] != task+".1" {
		t.Fatalf("disable slot %d: %d %+v", first, code, st)
	}
	if next := slotHolding(t, m, token, task+".2"); next == first {
		t.Errorf("the trial's next run is on the disabled slot %d", next)
	}
	e := waitFor(t, m, token, id, 90*time.Second)
	if e.State != resolute.StateCompleted || e.Restarts != 0 {
		t.Fatalf("experiment: %s, restarts %d", e.State, e.Restarts)
	}
	allocs, _ := m.DB.TrialAllocations(ctx, trials[0].ID)
	if len(allocs) < 2 || !allocs[0].Preempt {
		t.Fatalf("the trial was not preempted: %+v", allocs)
	}
	reports, _ := m.DB.TrialMetrics(ctx, trials[0].ID, "validation")
	seen := map[int64]bool{}
	for _, r := range reports {
		seen[r.StepsCompleted] = true
	}
	for s := int64(1); s <= 40; s++ {
		if !seen[s] {
			t.Errorf("validation lost at step %d", s)
		}
	}
}
