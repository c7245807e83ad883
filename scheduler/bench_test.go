package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchSnapshot is 125 agents of 8 slots, about 700 of the 1,000 slots held
// by running tasks of random priority, and 10,000 pending jobs of one task
// each (1, 2, 4 or 8 slots, random priorities; one in ten not preemptible).
func benchSnapshot(cfg Config) Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 4, 8}
	s := Snapshot{Pools: []Pool{{Name: "default", Config: cfg}}}
	free := make([]int, 125)
	for i := range free {
		s.Pools[0].Agents = append(s.Pools[0].Agents, agent(fmt.Sprintf("agent-%03d", i), 8))
		free[i] = 8
	}
	job := func(n, slots int) Job {
		return Job{
			ID: fmt.Sprintf("job-%d", n), Pool: "default", Priority: 1 + rng.IntN(99),
			Position: float64(n), Submitted: t0.Add(time.Duration(n) * time.Second),
			Preemptible: rng.IntN(10) != 0, Weight: 1,
		}
	}
	n, used := 0, 0
	for used < 700 {
		slots := sizes[rng.IntN(len(sizes))]
		for ai := range free {
			if free[ai] >= slots {
				j := job(n, slots)
				j.Tasks = []Task{running(fmt.Sprintf("run-%d", n), span(s.Pools[0].Agents[ai].ID, 8-free[ai], 8-free[ai]+slots))}
				s.Jobs = append(s.Jobs, j)
				free[ai] -= slots
				used += slots
				n++
				break
			}
		}
	}
	for range 10_000 {
		j := job(n, 0)
		j.Tasks = []Task{pending(fmt.Sprintf("task-%d", n), sizes[rng.IntN(len(sizes))])}
		s.Jobs = append(s.Jobs, j)
		n++
	}
	return s
}

// BenchmarkDecide10kJobs1kSlots is one scheduling pass over 10,000 pending
// jobs and 1,000 slots; the target is under 10 ms per pass.
func BenchmarkDecide10kJobs1kSlots(b *testing.B) {
	for name, cfg := range map[string]Config{
		"priority_preemption": {Type: TypePriority, Preemption: true, DefaultPriority: 42},
		"priority":            {Type: TypePriority, DefaultPriority: 42},
		"fair_share":          {Type: TypeFairShare},
		"round_robin":         {Type: TypeRoundRobin},
	} {
		s := benchSnapshot(cfg)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Decide(s)
			}
		})
	}
}
