package scheduler

import "testing"

// onePool is a snapshot of pool "default" with the given scheduler, agents
// and jobs.
func onePool(cfg Config, agents []Agent, jobs ...Job) Snapshot {
	return Snapshot{Pools: []Pool{{Name: "default", Config: cfg, Agents: agents}}, Jobs: jobs}
}

func TestDecideFittingAndGangs(t *testing.T) {
	prio := Config{Type: TypePriority, DefaultPriority: 42}
	worst := prio
	worst.FittingPolicy = FitWorst
	// Agents a (1 of 4 free), b (3 of 4 free), c (4 free).
	three := []Agent{agent("a", 4), agent("b", 4), agent("c", 4)}
	busy := job("experiment-1", 42, 1,
		running("busy-a", refs("a", 0, 1, 2)), running("busy-b", refs("b", 0)))
	two := []Agent{agent("a", 4), agent("b", 4)}
	eights := []Agent{agent("a", 8), agent("b", 8)}

	tests := map[string]struct {
		snap Snapshot
		want Decision
	}{
		"best fit packs onto the agent with the fewest free slots that fit": {
			snap: onePool(prio, three, busy, job("experiment-2", 42, 2, pending("t", 2))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: refs("b", 1, 2)}},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0},
			},
		},
		"worst fit spreads onto the agent with the most free slots": {
			snap: onePool(worst, three, busy, job("experiment-2", 42, 2, pending("t", 2))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: refs("c", 0, 1)}},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0},
			},
		},
		"equally good agents go by agent id": {
			snap: onePool(prio, []Agent{agent("c", 4), agent("b", 4)}, job("experiment-2", 42, 2, pending("t", 2))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: refs("b", 0, 1)}},
				JobsAhead: map[string]int{"experiment-2": 0},
			},
		},
		"a gang task waits rather than start on 2 + 2 slots of two agents": {
			snap: onePool(prio, two,
				job("experiment-1", 42, 1, running("x", refs("a", 0, 1)), running("y", refs("b", 0, 1))),
				job("experiment-2", 42, 2, pending("t", 4))),
			want: Decision{
				Waiting: map[string]string{
					"t": "needs 4 slots on one agent; 4 free in pool default, at most 2 on one agent"},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0},
			},
		},
		"a task larger than any agent spans whole free agents": {
			snap: onePool(prio, eights, job("experiment-1", 42, 1, pending("t", 16))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: append(span("a", 0, 8), span("b", 0, 8)...)}},
				JobsAhead: map[string]int{"experiment-1": 0},
			},
		},
		"a spanning task waits until its agents are wholly free": {
			snap: onePool(prio, []Agent{agent("a", 8), agent("b", 8), agent("c", 8)},
				job("experiment-1", 42, 1, running("x", refs("b", 3)), running("y", refs("c", 0))),
				job("experiment-2", 42, 2, pending("t", 16))),
			want: Decision{
				Waiting:   map[string]string{"t": "needs 16 slots on whole free agents; 22 free in pool default"},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0},
			},
		},
		"a spanning task takes whole agents adding up to exactly its need": {
			snap: onePool(prio, []Agent{agent("a", 8), agent("b", 6), agent("c", 6)},
				job("experiment-1", 42, 1, pending("t", 12))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: append(span("b", 0, 6), span("c", 0, 6)...)}},
				JobsAhead: map[string]int{"experiment-1": 0},
			},
		},
		"a task needing more slots than the pool has can never run": {
			snap: onePool(prio, eights, job("experiment-1", 42, 1, pending("t", 24))),
			want: Decision{
				Waiting:   map[string]string{"t": "can never run: needs 24 slots; pool default has 16"},
				JobsAhead: map[string]int{"experiment-1": 0},
			},
		},
		"a task no set of whole agents adds up to can never run": {
			snap: onePool(prio, eights, job("experiment-1", 42, 1, pending("t", 12))),
			want: Decision{
				Waiting: map[string]string{
					"t": "can never run: needs 12 slots; the largest agent of pool default has 8"},
				JobsAhead: map[string]int{"experiment-1": 0},
			},
		},
		"a task that can never run holds back no lower priority": {
			snap: onePool(prio, two,
				job("experiment-1", 1, 1, pending("never", 9)),
				job("experiment-2", 50, 2, pending("t", 1))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "t", Slots: refs("a", 0)}},
				Waiting:   map[string]string{"never": "can never run: needs 9 slots; pool default has 8"},
				JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 1},
			},
		},
		"max_slots caps the slots a job holds, running and starting": {
			snap: onePool(prio, eights, func() Job {
				j := job("experiment-1", 42, 1, running("r", refs("a", 0, 1)), pending("p1", 2), pending("p2", 1))
				j.MaxSlots = 4
				return j
			}()),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "p1", Slots: refs("a", 2, 3)}},
				Waiting:   map[string]string{"p2": "max_slots 4 reached"},
				JobsAhead: map[string]int{"experiment-1": 0},
			},
		},
		"zero-slot tasks start even when every slot is taken": {
			snap: onePool(prio, []Agent{agent("a", 1)},
				job("experiment-1", 1, 1, running("r", refs("a", 0)), pending("p", 1)),
				job("tensorboard-2", 50, 2, pending("tb", 0))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "tb"}},
				Waiting:   map[string]string{"p": "needs 1 slot; 0 free in pool default"},
				JobsAhead: map[string]int{"experiment-1": 0, "tensorboard-2": 1},
			},
		},
		"jobs of a pool the snapshot lacks wait": {
			snap: Snapshot{
				Pools: []Pool{{Name: "default", Config: prio, Agents: two}},
				Jobs: []Job{func() Job {
					j := job("experiment-1", 42, 1, pending("t", 1), pending("z", 0))
					j.Pool = "gpu"
					return j
				}()},
			},
			want: Decision{
				Waiting:   map[string]string{"t": "unknown pool", "z": "unknown pool"},
				JobsAhead: map[string]int{"experiment-1": -1},
			},
		},
		"on Kubernetes a higher priority number goes first": {
			snap: onePool(Config{Type: TypePriority, DefaultPriority: 50, HigherFirst: true}, []Agent{agent("a", 1)},
				job("experiment-1", 10, 1, pending("low", 1)),
				job("experiment-2", 0, 2, pending("default", 1)),
				job("experiment-3", 90, 3, pending("high", 1))),
			want: Decision{
				Actions: []Action{Start{AllocationID: "high", Slots: refs("a", 0)}},
				Waiting: map[string]string{
					"default": "needs 1 slot; 0 free in pool default",
					"low":     "behind experiment-2 (priority 50), which waits for slots",
				},
				JobsAhead: map[string]int{"experiment-3": 0, "experiment-2": 1, "experiment-1": 2},
			},
		},
		"equal priorities go by queue position, not submission": {
			snap: onePool(prio, []Agent{agent("a", 1)},
				job("experiment-1", 42, 5, pending("later", 1)),
				job("experiment-2", 42, 3, pending("first", 1))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "first", Slots: refs("a", 0)}},
				Waiting:   map[string]string{"later": "needs 1 slot; 0 free in pool default"},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			diffDecision(t, tc.want, Decide(tc.snap))
		})
	}
}

func TestDecidePoolsAreIndependent(t *testing.T) {
	cfg := Config{Type: TypePriority, Preemption: true, DefaultPriority: 42}
	s := Snapshot{
		Pools: []Pool{
			{Name: "gpu", Config: cfg, Agents: []Agent{agent("g", 1)}},
			{Name: "cpu", Config: cfg, Agents: []Agent{agent("c", 1)}},
		},
		Jobs: []Job{
			{ID: "experiment-1", Pool: "gpu", Priority: 50, Preemptible: true, Tasks: []Task{running("r", refs("g", 0))}},
			{ID: "experiment-2", Pool: "cpu", Priority: 1, Position: 1, Tasks: []Task{pending("c1", 1)}},
			{ID: "experiment-3", Pool: "gpu", Priority: 1, Position: 2, Tasks: []Task{pending("g1", 1)}},
		},
	}
	want := Decision{
		Actions: []Action{
			Preempt{"r", "preempted by experiment-3 (priority 1)"},
			Start{AllocationID: "c1", Slots: refs("c", 0)},
		},
		Waiting:   map[string]string{"g1": "waiting for experiment-1 to free slots (preempting)"},
		JobsAhead: map[string]int{"experiment-1": 0, "experiment-2": 0, "experiment-3": 0},
	}
	diffDecision(t, want, Decide(s))
}
