package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestATaskThatAvoidsAgentsStartsOnlyOnOthers(t *testing.T) {
	avoiding := func(id string, n int, agents ...string) Task {
		t := pending(id, n)
		t.Avoid = agents
		return t
	}
	tests := map[string]struct {
		policy  string
		agents  []Agent
		jobs    []Job
		starts  map[string][]SlotRef
		waiting map[string]string
	}{
		"best fit would pick the fuller agent; the task goes to the other": {
			policy: TypePriority,
			agents: []Agent{agent("a", 2), agent("b", 4)},
			jobs: []Job{job("busy", 42, 1, running("busy-1", refs("a", 0))),
				job("exp", 42, 2, avoiding("exp-1", 1, "a"))},
			starts: map[string][]SlotRef{"exp-1": refs("b", 0)},
		},
		"with every agent avoided it waits, saying why": {
			policy:  TypePriority,
			agents:  []Agent{agent("a", 2), agent("b", 2)},
			jobs:    []Job{job("exp", 42, 1, avoiding("exp-1", 1, "a", "b"))},
			starts:  map[string][]SlotRef{},
			waiting: map[string]string{"exp-1": "waits for slots on an agent other than a, b (excluded by a log policy)"},
		},
		"its failure does not keep a later task off the agent it avoids": {
			policy: TypePriority,
			agents: []Agent{agent("a", 2), agent("b", 2)},
			jobs: []Job{job("busy", 42, 1, running("busy-1", span("b", 0, 2))),
				job("exp", 42, 2, avoiding("exp-1", 2, "a")), job("other", 42, 3, pending("other-1", 2))},
			starts:  map[string][]SlotRef{"other-1": span("a", 0, 2)},
			waiting: map[string]string{"exp-1": "waits for slots on an agent other than a (excluded by a log policy)"},
		},
		"fair share avoids too": {
			policy: TypeFairShare,
			agents: []Agent{agent("a", 1), agent("b", 1)},
			jobs:   []Job{job("exp", 42, 1, avoiding("exp-1", 1, "a"))},
			starts: map[string][]SlotRef{"exp-1": refs("b", 0)},
		},
		"round robin avoids too": {
			policy: TypeRoundRobin,
			agents: []Agent{agent("a", 1), agent("b", 1)},
			jobs:   []Job{job("exp", 42, 1, avoiding("exp-1", 1, "b"))},
			starts: map[string][]SlotRef{"exp-1": refs("a", 0)},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := Decide(Snapshot{Now: t0, Pools: []Pool{{Name: "default", Agents: tt.agents,
				Config: Config{Type: tt.policy, FittingPolicy: FitBest, DefaultPriority: 42}}}, Jobs: tt.jobs})
			starts := map[string][]SlotRef{}
			for _, a := range d.Actions {
				if s, ok := a.(Start); ok {
					starts[s.AllocationID] = s.Slots
				}
			}
			if diff := cmp.Diff(tt.starts, starts); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
			for id, want := range tt.waiting {
				if got := d.Waiting[id]; got != want {
					t.Errorf("%s waits %q, want %q", id, got, want)
				}
			}
		})
	}
}

// A task that needs no slots starts on no disabled or avoided agent: its
// Start names them for a resource manager that places it (Kubernetes), and
// with no other agent in the pool it waits.
func TestATaskWithoutSlotsKeepsOffDisabledAndAvoidedAgents(t *testing.T) {
	off := func(a Agent) Agent { a.Disabled = true; a.SlotIDs = nil; return a }
	cpuTask := func(id string, avoid ...string) Task { t := pending(id, 0); t.Avoid = avoid; return t }
	tests := map[string]struct {
		agents  []Agent
		task    Task
		avoid   []string // nil: waits
		waiting string
	}{
		"every agent open":                    {agents: []Agent{agent("a", 1), agent("b", 1)}, task: cpuTask("c-1"), avoid: []string{}},
		"one disabled":                        {agents: []Agent{off(agent("a", 1)), agent("b", 1)}, task: cpuTask("c-1"), avoid: []string{"a"}},
		"one disabled, one avoided, one open": {agents: []Agent{off(agent("a", 1)), agent("b", 1), agent("c", 0)}, task: cpuTask("c-1", "b"), avoid: []string{"a", "b"}},
		"every agent disabled or avoided": {agents: []Agent{off(agent("a", 1)), agent("b", 1)}, task: cpuTask("c-1", "b"),
			waiting: "waits for an agent that is not disabled or excluded in pool default"},
		"a pool that lists no agents leaves the placing to its resource manager": {task: cpuTask("c-1"), avoid: []string{}},
	}
	for name, tt := range tests {
		for _, policy := range []string{TypePriority, TypeFairShare, TypeRoundRobin} {
			t.Run(name+"/"+policy, func(t *testing.T) {
				d := Decide(Snapshot{Now: t0, Pools: []Pool{{Name: "default", Agents: tt.agents,
					Config: Config{Type: policy, FittingPolicy: FitBest, DefaultPriority: 42}}},
					Jobs: []Job{job("cmd", 42, 1, tt.task)}})
				var got []string
				started := false
				for _, a := range d.Actions {
					if s, ok := a.(Start); ok && s.AllocationID == "c-1" {
						started, got = true, append([]string{}, s.Avoid...)
					}
				}
				if tt.avoid == nil {
					if started || d.Waiting["c-1"] != tt.waiting {
						t.Fatalf("started %v, waits %q; want it to wait: %q", started, d.Waiting["c-1"], tt.waiting)
					}
					return
				}
				if !started {
					t.Fatalf("not started; waits %q", d.Waiting["c-1"])
				}
				if diff := cmp.Diff(tt.avoid, got); diff != "" {
					t.Errorf("avoid (-want +got):\n%s", diff)
				}
			})
		}
	}
}
