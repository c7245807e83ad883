package control_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/resolute-ml/resolute/control"
)

// TestAPoolHasTheSlotsOfItsAgentsNarrowedToItsSlotIDs: whatever the resource
// manager, a pool shows the slots it gives the pool, only those of its
// slot_ids when it names them, and counts those held.
func TestAPoolHasTheSlotsOfItsAgentsNarrowedToItsSlotIDs(t *testing.T) {
	rm := &fakeRM{total: 4, held: map[string][]int{"trial-1.1": {1}}}
	x := control.NewRunner(nil, nil, rm, control.RunOptions{Pools: []control.Pool{
		{Name: "a", SlotIDs: []int{0, 1}}, {Name: "b"}}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pools := x.Queue.ResourcePools()
	if len(pools) != 2 {
		t.Fatalf("pools %+v", pools)
	}
	for i, want := range []struct{ slots, used int }{{2, 1}, {4, 1}} {
		p := pools[i]
		if len(p.Slots) != want.slots || p.SlotsUsed != want.used || p.SlotType != "cpu" {
			t.Errorf("pool %s: %d slots, %d used, type %s; want %d, %d, cpu", p.Name, len(p.Slots), p.SlotsUsed, p.SlotType, want.slots, want.used)
		}
	}
	if a := x.Queue.Agents(); len(a) != 1 || len(a[0].Slots) != 4 || a[0].Slots[1].AllocationID != "trial-1.1" {
		t.Errorf("agents %+v", a)
	}
}
