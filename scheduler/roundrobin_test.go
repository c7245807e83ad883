package scheduler

import "testing"

func TestDecideRoundRobin(t *testing.T) {
	rr := Config{Type: TypeRoundRobin, DefaultPriority: 42}
	tests := map[string]struct {
		snap Snapshot
		want Decision
	}{
		"jobs take turns, one task each per round, whatever their priority": {
			snap: onePool(rr, []Agent{agent("a", 4)},
				job("experiment-1", 99, 1, trials("a", 3, 1)...),
				job("experiment-2", 1, 2, trials("b", 3, 1)...)),
			want: Decision{
				Actions: []Action{
					Start{AllocationID: "a-1", Slots: refs("a", 0)}, Start{AllocationID: "b-1", Slots: refs("a", 1)},
					Start{AllocationID: "a-2", Slots: refs("a", 2)}, Start{AllocationID: "b-2", Slots: refs("a", 3)},
				},
				Waiting:   waits("needs 1 slot; 0 free in pool default", []string{"a-3", "b-3"}),
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 1},
			},
		},
		"a job whose next task does not fit starts the next one that does": {
			snap: onePool(rr, []Agent{agent("a", 4)},
				job("experiment-1", 0, 1, running("r", refs("a", 0, 1))),
				job("experiment-2", 0, 2, pending("big", 4), pending("small", 1)),
				job("experiment-3", 0, 3, trials("c", 2, 1)...)),
			want: Decision{
				Actions: []Action{Start{AllocationID: "small", Slots: refs("a", 2)}, Start{AllocationID: "c-1", Slots: refs("a", 3)}},
				Waiting: map[string]string{
					"big": "needs 4 slots; 2 free in pool default",
					"c-2": "needs 1 slot; 0 free in pool default",
				},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0, "experiment-3": 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			diffDecision(t, tc.want, Decide(tc.snap))
		})
	}
}
