package control_test

import (
	"sync"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

func order(t *testing.T, h *harness) []string {
	t.Helper()
	jobs, err := h.x.Queue(h.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobID)
	}
	return out
}

func TestReorderingTheQueue(t *testing.T) {
	h := newHarness(t, 0) // no slots: everything waits
	a, b, c := h.create(single), h.create(single), h.create(single)
	ja, jb, jc := control.JobID(a.ID), control.JobID(b.ID), control.JobID(c.ID)
	if got := order(t, h); len(got) != 3 || got[0] != ja || got[2] != jc {
		t.Fatalf("submission order: %v", got)
	}
	if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{{JobID: jc, AheadOf: ja}}); err != nil {
		t.Fatal(err)
	}
	if got := order(t, h); got[0] != jc || got[1] != ja || got[2] != jb {
		t.Fatalf("after moving c ahead of a: %v", got)
	}
	if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{{JobID: jc, BehindOf: jb}}); err != nil {
		t.Fatal(err)
	}
	if got := order(t, h); got[0] != ja || got[2] != jc {
		t.Fatalf("after moving c behind b: %v", got)
	}
	// Moving next to a job of another priority takes its priority.
	p := 10
	if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{{JobID: ja, Priority: &p}}); err != nil {
		t.Fatal(err)
	}
	if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{{JobID: jc, AheadOf: ja}}); err != nil {
		t.Fatal(err)
	}
	jobs, _ := h.x.Queue(h.ctx, "")
	for _, j := range jobs {
		if j.JobID == jc && j.Priority != 10 {
			t.Fatalf("c moved next to a priority-10 job keeps priority %d", j.Priority)
		}
	}
}

func TestBadQueueUpdatesAreRefused(t *testing.T) {
	h := newHarness(t, 0)
	a := h.create(single)
	done := h.create(single)
	if err := h.x.SetState(h.ctx, authz.System, done.ID, "cancel"); err != nil {
		t.Fatal(err)
	}
	zero, big, neg := 0.0, 100, -1.0
	pool := "nowhere"
	tests := map[string]resolute.QueueControl{
		"a priority above 99":       {JobID: control.JobID(a.ID), Priority: &big},
		"a weight of zero":          {JobID: control.JobID(a.ID), Weight: &zero},
		"a negative weight":         {JobID: control.JobID(a.ID), Weight: &neg},
		"an unknown pool":           {JobID: control.JobID(a.ID), ResourcePool: &pool},
		"a move next to a done job": {JobID: control.JobID(a.ID), AheadOf: control.JobID(done.ID)},
		"a move next to itself":     {JobID: control.JobID(a.ID), AheadOf: control.JobID(a.ID)},
		"a job id of another kind":  {JobID: "notebook-3", AheadOf: control.JobID(a.ID)},
	}
	for name, u := range tests {
		t.Run(name, func(t *testing.T) {
			if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{u}); resolute.ErrorCode(err) != resolute.EInvalid {
				t.Fatalf("got %v, want invalid", err)
			}
		})
	}
}

func TestConcurrentReordersKeepEveryJobOnce(t *testing.T) {
	h := newHarness(t, 0)
	var ids []string
	for i := 0; i < 6; i++ {
		ids = append(ids, control.JobID(h.create(single).ID))
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := resolute.QueueControl{JobID: ids[i%6], AheadOf: ids[(i+3)%6]}
			if i%2 == 1 {
				u = resolute.QueueControl{JobID: ids[i%6], BehindOf: ids[(i+2)%6]}
			}
			if err := h.x.UpdateQueue(h.ctx, []resolute.QueueControl{u}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	got := order(t, h)
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	if len(got) != 6 || len(seen) != 6 {
		t.Fatalf("queue after concurrent moves: %v", got)
	}
	jobs, _ := h.x.Queue(h.ctx, "")
	for i := 1; i < len(jobs); i++ {
		if jobs[i].QueuePosition == jobs[i-1].QueuePosition {
			t.Fatalf("two jobs share position %v", jobs[i].QueuePosition)
		}
	}
}
