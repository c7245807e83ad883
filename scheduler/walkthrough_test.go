package scheduler

import "testing"

// The documentation's example of the priority scheduler with preemption, on
// 8 slots of one agent: experiments are preemptible, the notebook is not,
// and a lower priority number goes first.
func TestPriorityWalkthrough(t *testing.T) {
	s := Snapshot{Pools: []Pool{{
		Name:   "default",
		Config: Config{Type: TypePriority, Preemption: true, DefaultPriority: 42},
		Agents: []Agent{agent("a1", 8)},
	}}}
	const (
		asha     = "experiment-1" // priority 2, adaptive_asha, 20 trials of 1 slot
		dist     = "experiment-2" // priority 1, one trial of 4 slots
		notebook = "notebook-3"   // priority 3, 1 slot, not preemptible
		big      = "experiment-4" // priority 1, one trial of 8 slots
		mid      = "experiment-5" // priority 2, one trial of 4 slots
	)
	free0 := "needs 1 slot; 0 free in pool default"

	runScenario(t, s, []step{{
		name: "1. an ASHA search of 20 one-slot trials runs 8 on the 8 slots",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job(asha, 2, 1, trials("asha", 20, 1)...))
		},
		want: Decision{
			Actions: []Action{
				Start{AllocationID: "asha-1", Slots: refs("a1", 0)}, Start{AllocationID: "asha-2", Slots: refs("a1", 1)},
				Start{AllocationID: "asha-3", Slots: refs("a1", 2)}, Start{AllocationID: "asha-4", Slots: refs("a1", 3)},
				Start{AllocationID: "asha-5", Slots: refs("a1", 4)}, Start{AllocationID: "asha-6", Slots: refs("a1", 5)},
				Start{AllocationID: "asha-7", Slots: refs("a1", 6)}, Start{AllocationID: "asha-8", Slots: refs("a1", 7)},
			},
			Waiting:   waits(free0, ids("asha", 9, 20)),
			JobsAhead: map[string]int{asha: 0},
		},
	}, {
		name: "2. a priority 1 experiment of 4 slots preempts the 4 latest ASHA trials",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job(dist, 1, 2, pending("dist-1", 4)))
		},
		want: Decision{
			Actions: []Action{
				Preempt{"asha-8", "preempted by experiment-2 (priority 1)"},
				Preempt{"asha-7", "preempted by experiment-2 (priority 1)"},
				Preempt{"asha-6", "preempted by experiment-2 (priority 1)"},
				Preempt{"asha-5", "preempted by experiment-2 (priority 1)"},
			},
			Waiting: waits("waiting for experiment-1 to free slots (preempting)", []string{"dist-1"},
				waits(free0, ids("asha", 9, 20))),
			JobsAhead: map[string]int{dist: 0, asha: 1},
		},
	}, {
		name: "2. while the trials checkpoint, nothing more is preempted and their slots are kept for it",
		want: Decision{
			Waiting: waits("waiting for experiment-1 to free slots (preempting)", []string{"dist-1"},
				waits(free0, ids("asha", 9, 20))),
			JobsAhead: map[string]int{dist: 0, asha: 1},
		},
	}, {
		name:   "2. once they exit, the experiment starts; they wait with the other trials",
		change: func(s *Snapshot) { exit(s, ids("asha", 5, 8)...) },
		want: Decision{
			Actions:   []Action{Start{AllocationID: "dist-1", Slots: span("a1", 4, 8)}},
			Waiting:   waits(free0, ids("asha", 5, 20)),
			JobsAhead: map[string]int{dist: 0, asha: 1},
		},
	}, {
		name: "3. a priority 3 notebook waits while the experiments want every slot",
		change: func(s *Snapshot) {
			nb := job(notebook, 3, 3, pending("notebook-3-task", 1))
			nb.Preemptible = false
			s.Jobs = append(s.Jobs, nb)
		},
		want: Decision{
			Waiting: waits(free0, ids("asha", 5, 20),
				waits("behind experiment-1 (priority 2), which waits for slots", []string{"notebook-3-task"})),
			JobsAhead: map[string]int{dist: 0, asha: 0, notebook: 1},
		},
	}, {
		name: "4. both experiments complete and the notebook runs",
		change: func(s *Snapshot) {
			removeJob(s, asha)
			removeJob(s, dist)
		},
		want: Decision{
			Actions:   []Action{Start{AllocationID: "notebook-3-task", Slots: refs("a1", 0)}},
			JobsAhead: map[string]int{notebook: 0},
		},
	}, {
		name: "5. a priority 1 experiment of 8 slots cannot run: the notebook holds one and is not preemptible",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job(big, 1, 4, pending("big-1", 8)))
		},
		want: Decision{
			Waiting:   map[string]string{"big-1": "needs 8 slots; 7 free in pool default"},
			JobsAhead: map[string]int{big: 0, notebook: 0},
		},
	}, {
		name: "6. a priority 2 experiment of 4 slots backfills the idle slots",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job(mid, 2, 5, pending("mid-1", 4)))
		},
		want: Decision{
			Actions:   []Action{Start{AllocationID: "mid-1", Slots: span("a1", 1, 5)}},
			Waiting:   map[string]string{"big-1": "needs 8 slots; 7 free in pool default"},
			JobsAhead: map[string]int{big: 0, mid: 1, notebook: 0},
		},
	}, {
		name:   "7. the notebook is killed: the priority 2 experiment is preempted for the priority 1 one",
		change: func(s *Snapshot) { removeJob(s, notebook) },
		want: Decision{
			Actions:   []Action{Preempt{"mid-1", "preempted by experiment-4 (priority 1)"}},
			Waiting:   map[string]string{"big-1": "waiting for experiment-5 to free slots (preempting)"},
			JobsAhead: map[string]int{big: 0, mid: 0},
		},
	}, {
		name:   "7. once it exits, the priority 1 experiment starts",
		change: func(s *Snapshot) { exit(s, "mid-1") },
		want: Decision{
			Actions:   []Action{Start{AllocationID: "big-1", Slots: span("a1", 0, 8)}},
			Waiting:   map[string]string{"mid-1": "needs 4 slots; 0 free in pool default"},
			JobsAhead: map[string]int{big: 0, mid: 1},
		},
	}, {
		name:   "7. when it completes, the priority 2 experiment restarts",
		change: func(s *Snapshot) { removeJob(s, big) },
		want: Decision{
			Actions:   []Action{Start{AllocationID: "mid-1", Slots: span("a1", 0, 4)}},
			JobsAhead: map[string]int{mid: 0},
		},
	}})
}

// Step 2 of the walkthrough without preemption: the experiment waits until
// the ASHA trials need at most 4 slots, and the ASHA trials do not backfill
// the slots it is waiting for.
func TestPriorityWithoutPreemptionWaitsForSlots(t *testing.T) {
	s := Snapshot{Pools: []Pool{{
		Name:   "default",
		Config: Config{Type: TypePriority, DefaultPriority: 42},
		Agents: []Agent{agent("a1", 8)},
	}}}
	behind := "behind experiment-2 (priority 1), which waits for slots"
	runScenario(t, s, []step{{
		name: "eight of the ASHA trials run",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job("experiment-1", 2, 1, trials("asha", 20, 1)...))
		},
		want: Decision{
			Actions: []Action{
				Start{AllocationID: "asha-1", Slots: refs("a1", 0)}, Start{AllocationID: "asha-2", Slots: refs("a1", 1)},
				Start{AllocationID: "asha-3", Slots: refs("a1", 2)}, Start{AllocationID: "asha-4", Slots: refs("a1", 3)},
				Start{AllocationID: "asha-5", Slots: refs("a1", 4)}, Start{AllocationID: "asha-6", Slots: refs("a1", 5)},
				Start{AllocationID: "asha-7", Slots: refs("a1", 6)}, Start{AllocationID: "asha-8", Slots: refs("a1", 7)},
			},
			Waiting:   waits("needs 1 slot; 0 free in pool default", ids("asha", 9, 20)),
			JobsAhead: map[string]int{"experiment-1": 0},
		},
	}, {
		name: "the priority 1 experiment waits; nothing is preempted",
		change: func(s *Snapshot) {
			s.Jobs = append(s.Jobs, job("experiment-2", 1, 2, pending("dist-1", 4)))
		},
		want: Decision{
			Waiting: waits(behind, ids("asha", 9, 20),
				map[string]string{"dist-1": "needs 4 slots; 0 free in pool default"}),
			JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 1},
		},
	}, {
		name:   "two trials complete: their slots stay idle for the experiment",
		change: func(s *Snapshot) { finish(s, "asha-1", "asha-2") },
		want: Decision{
			Waiting: waits(behind, ids("asha", 9, 20),
				map[string]string{"dist-1": "needs 4 slots; 2 free in pool default"}),
			JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 1},
		},
	}, {
		name:   "two more complete: the ASHA trials hold 4 slots and the experiment starts",
		change: func(s *Snapshot) { finish(s, "asha-3", "asha-4") },
		want: Decision{
			Actions:   []Action{Start{AllocationID: "dist-1", Slots: span("a1", 0, 4)}},
			Waiting:   waits("needs 1 slot; 0 free in pool default", ids("asha", 9, 20)),
			JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 1},
		},
	}})
}
