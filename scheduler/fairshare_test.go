package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFillShares(t *testing.T) {
	tests := map[string]struct {
		capacity int
		demand   []int
		weight   []float64
		want     []int
	}{
		"slots go in proportion to demand":               {8, []int{10, 30}, []float64{1, 1}, []int{2, 6}},
		"weight multiplies demand":                       {8, []int{10, 30}, []float64{3, 1}, []int{4, 4}},
		"a share never exceeds demand; the rest goes on": {8, []int{2, 30}, []float64{10, 1}, []int{2, 6}},
		"everyone gets their demand when it all fits":    {8, []int{2, 3}, []float64{1, 1}, []int{2, 3}},
		"left-over slots go to the largest remainders":   {8, []int{5, 10, 10}, []float64{1, 1, 1}, []int{2, 3, 3}},
		"equal remainders go to the earlier position":    {8, []int{3, 3, 3}, []float64{1, 1, 1}, []int{3, 3, 2}},
		"no slots, no shares":                            {0, []int{3, 4}, []float64{1, 1}, []int{0, 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			jobs := make([]fsJob, len(tc.demand))
			for i := range jobs {
				jobs[i] = fsJob{rank: i, demand: tc.demand[i], weight: tc.weight[i]}
			}
			fillShares(jobs, tc.capacity, nil)
			got := make([]int, len(jobs))
			for i := range jobs {
				got[i] = jobs[i].share
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shares mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideFairShare(t *testing.T) {
	fs := Config{Type: TypeFairShare}
	eight := []Agent{agent("a", 8)}
	weighted := func(j Job, w float64) Job { j.Weight = w; return j }
	// runningTrials are n one-slot tasks on slots 0…n-1 of agent a.
	runningTrials := func(prefix string, n int) []Task {
		var ts []Task
		for i := 1; i <= n; i++ {
			ts = append(ts, running(fmt.Sprintf("%s-%d", prefix, i), refs("a", i-1)))
		}
		return ts
	}
	startsOn := func(prefix string, n, first int) []Action {
		var as []Action
		for i, id := range ids(prefix, 1, n) {
			as = append(as, Start{AllocationID: id, Slots: refs("a", first+i)})
		}
		return as
	}

	tests := map[string]struct {
		snap Snapshot
		want Decision
	}{
		"demands of 10 and 30 on 8 slots get 2 and 6": {
			snap: onePool(fs, eight, job("experiment-1", 0, 1, trials("a", 10, 1)...),
				job("experiment-2", 0, 2, trials("b", 30, 1)...)),
			want: Decision{
				Actions: append(startsOn("a", 2, 0), startsOn("b", 6, 2)...),
				Waiting: waits("fair share of 2 slots reached (holds 2)", ids("a", 3, 10),
					waits("fair share of 6 slots reached (holds 6)", ids("b", 7, 30))),
				JobsAhead: map[string]int{"experiment-1": -1, "experiment-2": -1},
			},
		},
		"weights of 3 and 1 make it 4 and 4": {
			snap: onePool(fs, eight, weighted(job("experiment-1", 0, 1, trials("a", 10, 1)...), 3),
				job("experiment-2", 0, 2, trials("b", 30, 1)...)),
			want: Decision{
				Actions:   append(startsOn("a", 4, 0), startsOn("b", 4, 4)...),
				Waiting:   waits("fair share of 4 slots reached (holds 4)", append(ids("a", 5, 10), ids("b", 5, 30)...)),
				JobsAhead: map[string]int{"experiment-1": -1, "experiment-2": -1},
			},
		},
		"a job that needs less than its share leaves the rest to the others": {
			snap: onePool(fs, eight, weighted(job("experiment-1", 0, 1, trials("a", 2, 1)...), 10),
				job("experiment-2", 0, 2, trials("b", 30, 1)...)),
			want: Decision{
				Actions:   append(startsOn("a", 2, 0), startsOn("b", 6, 2)...),
				Waiting:   waits("fair share of 6 slots reached (holds 6)", ids("b", 7, 30)),
				JobsAhead: map[string]int{"experiment-1": -1, "experiment-2": -1},
			},
		},
		"a new job preempts the others down to their shares": {
			snap: onePool(fs, eight,
				job("experiment-1", 0, 1, append(runningTrials("b", 8), trials("b-pending", 22, 1)...)...),
				job("experiment-2", 0, 2, trials("a", 10, 1)...)),
			want: Decision{
				Actions: []Action{
					Preempt{"b-8", "preempted: experiment-1 is above its fair share of 6 slots"},
					Preempt{"b-7", "preempted: experiment-1 is above its fair share of 6 slots"},
				},
				Waiting: waits("fair share of 6 slots reached (holds 8)", ids("b-pending", 1, 22),
					waits("needs 1 slot; 0 free in pool default", ids("a", 1, 2),
						waits("fair share of 2 slots reached (holds 0)", ids("a", 3, 10)))),
				JobsAhead: map[string]int{"experiment-1": -1, "experiment-2": -1},
			},
		},
		"a job whose share cannot hold its smallest task gives it away": {
			snap: onePool(fs, []Agent{agent("a", 6)},
				job("experiment-1", 0, 1, trials("a", 2, 4)...),
				job("experiment-2", 0, 2, trials("b", 2, 4)...)),
			want: Decision{
				Actions: []Action{Start{AllocationID: "a-1", Slots: span("a", 0, 4)}},
				Waiting: map[string]string{
					"a-2": "fair share of 6 slots reached (holds 4)",
					"b-1": "fair share of 0 slots reached (holds 0)",
					"b-2": "fair share of 0 slots reached (holds 0)",
				},
				JobsAhead: map[string]int{"experiment-1": -1, "experiment-2": -1},
			},
		},
		"zero-slot tasks start first in, first out": {
			snap: onePool(fs, []Agent{agent("a", 1)},
				func() Job {
					j := job("tensorboard-1", 0, 1, pending("late", 0))
					j.Submitted = t0.Add(time.Hour)
					return j
				}(),
				job("tensorboard-2", 0, 2, pending("early", 0))),
			want: Decision{
				Actions:   []Action{Start{AllocationID: "early"}, Start{AllocationID: "late"}},
				JobsAhead: map[string]int{"tensorboard-1": -1, "tensorboard-2": -1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			diffDecision(t, tc.want, Decide(tc.snap))
		})
	}
}
