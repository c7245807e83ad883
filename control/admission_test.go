package control_test

import (
	"testing"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

// TestAPausedTrialIsKilledOnceItsPreemptionTimeoutPassesOnTheAdmissionClock:
// a paused trial is asked to checkpoint and exit; the admission loop kills
// it only when its deadline (preemption_timeout, an hour by default) has
// passed on the runner's clock.
func TestAPausedTrialIsKilledOnceItsPreemptionTimeoutPassesOnTheAdmissionClock(t *testing.T) {
	h := newHarness(t, 1)
	e := h.create(single)
	h.admit()
	running := h.rm.running()
	if len(running) != 1 {
		t.Fatalf("one slot, %d running", len(running))
	}
	if err := h.x.SetState(h.ctx, authz.System, e.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	h.admit()
	if len(h.rm.killed) != 0 {
		t.Fatalf("killed before its deadline: %v", h.rm.killed)
	}
	h.skew = control.DefaultPreemptionTimeout + 1
	h.admit()
	if len(h.rm.killed) != 1 || h.rm.killed[0] != running[0].AllocationID {
		t.Fatalf("past its deadline, killed %v; want %s", h.rm.killed, running[0].AllocationID)
	}
}
