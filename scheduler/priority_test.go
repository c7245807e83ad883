package scheduler

import "testing"

func TestDecidePriorityPreemption(t *testing.T) {
	pre := Config{Type: TypePriority, Preemption: true, DefaultPriority: 42}
	notPreemptible := func(j Job) Job { j.Preemptible = false; return j }
	preempting := func(tk Task) Task { tk.Preempting = true; return tk }

	tests := map[string]struct {
		snap Snapshot
		want Decision
	}{
		"the least important job's latest tasks are preempted first": {
			snap: onePool(pre, []Agent{agent("a", 4)},
				job("experiment-1", 5, 1, running("p5-1", refs("a", 0)), running("p5-2", refs("a", 1))),
				job("experiment-2", 9, 2, running("p9-1", refs("a", 2))),
				job("experiment-3", 9, 3, running("p9-2", refs("a", 3))),
				job("experiment-4", 1, 4, pending("t", 2))),
			want: Decision{
				Actions: []Action{
					Preempt{"p9-2", "preempted by experiment-4 (priority 1)"},
					Preempt{"p9-1", "preempted by experiment-4 (priority 1)"},
				},
				Waiting: map[string]string{
					"t": "waiting for experiment-3, experiment-2 to free slots (preempting)"},
				JobsAhead: map[string]int{"experiment-4": 0, "experiment-1": 0, "experiment-2": 0, "experiment-3": 0},
			},
		},
		"non-preemptible jobs are never preempted": {
			snap: onePool(pre, []Agent{agent("a", 2)},
				notPreemptible(job("notebook-1", 9, 1, running("nb", refs("a", 0)))),
				job("experiment-2", 5, 2, running("e", refs("a", 1))),
				job("experiment-3", 1, 3, pending("t", 2))),
			want: Decision{
				Waiting:   map[string]string{"t": "needs 2 slots; 0 free in pool default"},
				JobsAhead: map[string]int{"experiment-3": 0, "experiment-2": 0, "notebook-1": 0},
			},
		},
		"equal priorities are not preempted": {
			snap: onePool(pre, []Agent{agent("a", 1)},
				job("experiment-1", 5, 2, running("r", refs("a", 0))),
				job("experiment-2", 5, 1, pending("t", 1))),
			want: Decision{
				Waiting:   map[string]string{"t": "needs 1 slot; 0 free in pool default"},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 0},
			},
		},
		"tasks already being preempted count as freed: nothing more is preempted": {
			snap: onePool(pre, []Agent{agent("a", 2)},
				job("experiment-1", 9, 1, preempting(running("r1", refs("a", 0))), running("r2", refs("a", 1))),
				job("experiment-2", 1, 2, pending("t", 1))),
			want: Decision{
				Waiting:   map[string]string{"t": "waiting for experiment-1 to free slots (preempting)"},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 0},
			},
		},
		"slots being freed for a task are not backfilled by another": {
			snap: onePool(pre, []Agent{agent("a", 4)},
				job("experiment-1", 9, 1, running("r1", refs("a", 0, 1, 2))),
				job("experiment-2", 1, 2, pending("big", 4)),
				job("experiment-3", 5, 3, pending("small", 1))),
			want: Decision{
				Actions: []Action{Preempt{"r1", "preempted by experiment-2 (priority 1)"}},
				Waiting: map[string]string{
					"big":   "waiting for experiment-1 to free slots (preempting)",
					"small": "needs 1 slot; 0 free in pool default",
				},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-3": 1, "experiment-1": 0},
			},
		},
		"just enough is preempted: a victim the task can do without is spared": {
			snap: onePool(pre, []Agent{agent("a", 8)},
				job("experiment-1", 9, 1, running("one", refs("a", 0))),
				job("experiment-2", 8, 2, running("seven", span("a", 1, 8))),
				job("experiment-3", 1, 3, pending("t", 7))),
			want: Decision{
				Actions:   []Action{Preempt{"seven", "preempted by experiment-3 (priority 1)"}},
				Waiting:   map[string]string{"t": "waiting for experiment-2 to free slots (preempting)"},
				JobsAhead: map[string]int{"experiment-3": 0, "experiment-2": 0, "experiment-1": 0},
			},
		},
		"victims on agents the task will not use are spared": {
			snap: onePool(pre, []Agent{agent("a", 4), agent("b", 4)},
				notPreemptible(job("notebook-1", 50, 1, running("nb", refs("b", 0, 1, 2)))),
				job("experiment-2", 9, 2, running("on-b", refs("b", 3))),
				job("experiment-3", 8, 3, running("on-a", span("a", 0, 4))),
				job("experiment-4", 1, 4, pending("t", 4))),
			want: Decision{
				Actions:   []Action{Preempt{"on-a", "preempted by experiment-4 (priority 1)"}},
				Waiting:   map[string]string{"t": "waiting for experiment-3 to free slots (preempting)"},
				JobsAhead: map[string]int{"experiment-4": 0, "experiment-3": 0, "experiment-2": 0, "notebook-1": 0},
			},
		},
		"a spanning task preempts whole agents": {
			snap: onePool(pre, []Agent{agent("a", 2), agent("b", 2)},
				job("experiment-1", 9, 1, running("ra", refs("a", 0)), running("rb", refs("b", 1))),
				job("experiment-2", 1, 2, pending("t", 4))),
			want: Decision{
				Actions: []Action{
					Preempt{"rb", "preempted by experiment-2 (priority 1)"},
					Preempt{"ra", "preempted by experiment-2 (priority 1)"},
				},
				Waiting:   map[string]string{"t": "waiting for experiment-1 to free slots (preempting)"},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 0},
			},
		},
		"with preemption, a non-preemptible lower priority does not backfill": {
			snap: onePool(pre, []Agent{agent("a", 4)},
				notPreemptible(job("notebook-1", 50, 1, running("nb", refs("a", 0)))),
				job("experiment-2", 1, 2, pending("big", 4)),
				notPreemptible(job("shell-3", 60, 3, pending("sh", 1))),
				job("experiment-4", 60, 4, pending("exp", 1))),
			want: Decision{
				Actions: []Action{Start{AllocationID: "exp", Slots: refs("a", 1)}},
				Waiting: map[string]string{
					"big": "needs 4 slots; 3 free in pool default",
					"sh":  "behind experiment-2 (priority 1), which waits for slots",
				},
				JobsAhead: map[string]int{"experiment-2": 0, "notebook-1": 0, "shell-3": 1, "experiment-4": 2},
			},
		},
		"a lower-priority notebook starts once the experiments need at most 7 of 8 slots": {
			snap: onePool(pre, []Agent{agent("a", 8)},
				job("experiment-1", 2, 1, running("asha-1", refs("a", 1)), running("asha-2", refs("a", 2)),
					running("asha-3", refs("a", 3))),
				job("experiment-2", 1, 2, running("dist-1", span("a", 4, 8))),
				notPreemptible(job("notebook-3", 3, 3, pending("nb", 1)))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "nb", Slots: refs("a", 0)}},
				JobsAhead: map[string]int{"experiment-2": 0, "experiment-1": 0, "notebook-3": 0},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			diffDecision(t, tc.want, Decide(tc.snap))
		})
	}
}
