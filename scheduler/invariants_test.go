package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// checkDecision checks what must hold of any Decision: starts use slots
// that exist, are not held and are not given twice, exactly as many as the
// task needs; every pending task either starts or waits, never both; only
// running tasks are preempted, once.
func checkDecision(t *testing.T, s Snapshot, d Decision) {
	t.Helper()
	exists := map[SlotRef]bool{}
	for _, p := range s.Pools {
		for _, a := range p.Agents {
			for _, id := range a.SlotIDs {
				exists[SlotRef{a.ID, id}] = true
			}
		}
	}
	taken := map[SlotRef]bool{}
	tasks := map[string]Task{}
	for _, j := range s.Jobs {
		for _, tk := range j.Tasks {
			tasks[tk.AllocationID] = tk
			for _, r := range tk.Assigned {
				taken[r] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range d.Actions {
		switch a := a.(type) {
		case Start:
			tk := tasks[a.AllocationID]
			if tk.Running || seen[a.AllocationID] {
				t.Errorf("start of %s, running or already acted on", a.AllocationID)
			}
			if len(a.Slots) != max(tk.Slots, 0) {
				t.Errorf("start of %s on %d slots, needs %d", a.AllocationID, len(a.Slots), tk.Slots)
			}
			for _, r := range a.Slots {
				if !exists[r] || taken[r] {
					t.Errorf("start of %s on %v: no such slot, or taken", a.AllocationID, r)
				}
				taken[r] = true
			}
			if _, waits := d.Waiting[a.AllocationID]; waits {
				t.Errorf("%s both starts and waits", a.AllocationID)
			}
			seen[a.AllocationID] = true
		case Preempt:
			if tk := tasks[a.AllocationID]; !tk.Running || tk.Preempting || seen[a.AllocationID] {
				t.Errorf("preempt of %s, not running, already preempting or already acted on", a.AllocationID)
			}
			seen[a.AllocationID] = true
		}
	}
	for id, tk := range tasks {
		if _, waits := d.Waiting[id]; !tk.Running && !waits && !seen[id] {
			t.Errorf("pending %s neither starts nor waits", id)
		}
	}
}

func TestDecideInvariantsOnALargeQueue(t *testing.T) {
	tests := map[string]Config{
		"priority with preemption":    {Type: TypePriority, Preemption: true, DefaultPriority: 42},
		"priority without preemption": {Type: TypePriority, DefaultPriority: 42},
		"fair share":                  {Type: TypeFairShare},
		"round robin":                 {Type: TypeRoundRobin},
		"priority, spreading":         {Type: TypePriority, Preemption: true, FittingPolicy: FitWorst},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			s := benchSnapshot(cfg)
			before := cloneSnapshot(s)
			d := Decide(s)
			checkDecision(t, s, d)
			if diff := cmp.Diff(before, s); diff != "" {
				t.Errorf("Decide changed its snapshot (-before +after):\n%s", diff)
			}
			// The same jobs in another order give the same decision.
			r := cloneSnapshot(s)
			slices.Reverse(r.Jobs)
			if diff := cmp.Diff(d, Decide(r), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide depends on the order of Snapshot.Jobs (-forward +reversed):\n%s", diff)
			}
		})
	}
}

// cloneSnapshot copies jobs and tasks deeply enough to see changes.
func cloneSnapshot(s Snapshot) Snapshot {
	c := s
	c.Jobs = slices.Clone(s.Jobs)
	for i := range c.Jobs {
		c.Jobs[i].Tasks = slices.Clone(c.Jobs[i].Tasks)
		for k := range c.Jobs[i].Tasks {
			c.Jobs[i].Tasks[k].Assigned = slices.Clone(c.Jobs[i].Tasks[k].Assigned)
		}
	}
	return c
}

// Many passes over a small cluster, the master applying each decision:
// preempted tasks exit by the next pass, running tasks complete at random.
// Every decision must be valid, and all work must get done.
func TestDecideSimulationFinishesAllWork(t *testing.T) {
	tests := map[string]Config{
		"priority with preemption":    {Type: TypePriority, Preemption: true, DefaultPriority: 42},
		"priority without preemption": {Type: TypePriority, DefaultPriority: 42},
		"fair share":                  {Type: TypeFairShare},
		"round robin":                 {Type: TypeRoundRobin},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 11))
			s := Snapshot{Pools: []Pool{{Name: "default", Config: cfg,
				Agents: []Agent{agent("a", 8), agent("b", 8), agent("c", 8), agent("d", 8)}}}}
			sizes := []int{0, 1, 2, 4, 8, 16}
			for n := range 60 {
				j := job(fmt.Sprintf("job-%d", n), 1+rng.IntN(5), float64(n))
				j.Preemptible = rng.IntN(4) != 0
				for k := range 1 + rng.IntN(4) {
					j.Tasks = append(j.Tasks, pending(fmt.Sprintf("job-%d.%d", n, k), sizes[rng.IntN(len(sizes))]))
				}
				s.Jobs = append(s.Jobs, j)
			}
			preempts := 0
			for pass := 0; len(s.Jobs) > 0; pass++ {
				if pass == 2000 {
					t.Fatalf("work left after %d passes: %d jobs", pass, len(s.Jobs))
				}
				var exited, done []string
				for _, j := range s.Jobs {
					for _, tk := range j.Tasks {
						switch {
						case tk.Preempting:
							exited = append(exited, tk.AllocationID)
						case tk.Running && rng.IntN(10) == 0:
							done = append(done, tk.AllocationID)
						}
					}
				}
				exit(&s, exited...)
				finish(&s, done...)
				d := Decide(s)
				checkDecision(t, s, d)
				for _, a := range d.Actions {
					if _, ok := a.(Preempt); ok {
						preempts++
					}
				}
				apply(&s, d)
				if len(s.Jobs) == 0 {
					t.Logf("all work done in %d passes, %d preemptions", pass+1, preempts)
				}
			}
		})
	}
}
