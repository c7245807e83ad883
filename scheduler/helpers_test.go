package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// t0 is when the first test job was submitted.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// agent is an agent with slots 0…n-1.
func agent(id string, n int) Agent {
	a := Agent{ID: id}
	for i := range n {
		a.SlotIDs = append(a.SlotIDs, i)
	}
	return a
}

// refs names slots of one agent.
func refs(agent string, slots ...int) []SlotRef {
	var r []SlotRef
	for _, s := range slots {
		r = append(r, SlotRef{Agent: agent, Slot: s})
	}
	return r
}

// span is the slots lo…hi-1 of an agent.
func span(agent string, lo, hi int) []SlotRef {
	var r []SlotRef
	for s := lo; s < hi; s++ {
		r = append(r, SlotRef{Agent: agent, Slot: s})
	}
	return r
}

// pending is a task waiting for n slots.
func pending(id string, n int) Task { return Task{AllocationID: id, Slots: n} }

// running is a task holding the given slots.
func running(id string, held []SlotRef) Task {
	return Task{AllocationID: id, Slots: len(held), Running: true, Assigned: held}
}

// trials are n pending tasks of s slots named prefix-1…prefix-n.
func trials(prefix string, n, s int) []Task {
	var ts []Task
	for i := 1; i <= n; i++ {
		ts = append(ts, pending(fmt.Sprintf("%s-%d", prefix, i), s))
	}
	return ts
}

// ids are prefix-lo…prefix-hi.
func ids(prefix string, lo, hi int) []string {
	var r []string
	for i := lo; i <= hi; i++ {
		r = append(r, fmt.Sprintf("%s-%d", prefix, i))
	}
	return r
}

// job is a job in pool "default" at queue position pos.
func job(id string, prio int, pos float64, tasks ...Task) Job {
	return Job{ID: id, Pool: "default", Priority: prio, Position: pos, Submitted: t0.Add(time.Duration(pos) * time.Minute),
		Preemptible: true, Tasks: tasks}
}

// waits maps each id to reason, adding to the maps given.
func waits(reason string, ids []string, more ...map[string]string) map[string]string {
	m := map[string]string{}
	for _, x := range more {
		for k, v := range x {
			m[k] = v
		}
	}
	for _, id := range ids {
		m[id] = reason
	}
	return m
}

// apply does what the master does with a Decision: started tasks run on
// their slots, preempted tasks are told to give them back.
func apply(s *Snapshot, d Decision) {
	for _, a := range d.Actions {
		for ji := range s.Jobs {
			for ti := range s.Jobs[ji].Tasks {
				t := &s.Jobs[ji].Tasks[ti]
				switch a := a.(type) {
				case Start:
					if t.AllocationID == a.AllocationID {
						t.Running, t.Assigned = true, a.Slots
					}
				case Preempt:
					if t.AllocationID == a.AllocationID {
						t.Preempting = true
					}
				}
			}
		}
	}
}

// exit is preempted tasks exiting: they go back to pending.
func exit(s *Snapshot, allocs ...string) {
	for ji := range s.Jobs {
		for ti := range s.Jobs[ji].Tasks {
			t := &s.Jobs[ji].Tasks[ti]
			if slices.Contains(allocs, t.AllocationID) {
				*t = Task{AllocationID: t.AllocationID, Slots: t.Slots}
			}
		}
	}
}

// finish removes tasks that completed (and jobs left with none).
func finish(s *Snapshot, allocs ...string) {
	jobs := s.Jobs[:0]
	for _, j := range s.Jobs {
		j.Tasks = slices.DeleteFunc(slices.Clone(j.Tasks), func(t Task) bool { return slices.Contains(allocs, t.AllocationID) })
		if len(j.Tasks) > 0 {
			jobs = append(jobs, j)
		}
	}
	s.Jobs = jobs
}

// removeJob drops a job: it completed or was killed.
func removeJob(s *Snapshot, id string) {
	s.Jobs = slices.DeleteFunc(s.Jobs, func(j Job) bool { return j.ID == id })
}

// diffDecision compares decisions, nil and empty alike.
func diffDecision(t *testing.T, want, got Decision) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
	}
}

// step is one moment of a scenario: what changed, then what Decide says.
type step struct {
	name   string
	change func(*Snapshot)
	want   Decision
}

// runScenario plays steps in order, applying each Decision like the master.
func runScenario(t *testing.T, s Snapshot, steps []step) {
	t.Helper()
	for _, st := range steps {
		if st.change != nil {
			st.change(&s)
		}
		got := Decide(s)
		if diff := cmp.Diff(st.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: Decide() mismatch (-want +got):\n%s", st.name, diff)
		}
		apply(&s, got)
	}
}
