package control

import (
	"slices"

	"github.com/resolute-ml/resolute"
)

// Agents lists the machines and their slots: Kubernetes nodes, or the
// master's own machine.
func (x *Experiments) Agents() []resolute.Agent { return x.rm.Agents("") }

// poolAgents are the machines of a pool with the slots it may use: those the
// resource manager gives it, narrowed to its slot_ids when it names them.
func (x *Experiments) poolAgents(p Pool) []resolute.Agent {
	agents := x.rm.Agents(p.Name)
	if p.SlotIDs == nil {
		return agents
	}
	for i, a := range agents {
		agents[i].Slots = slices.DeleteFunc(slices.Clone(a.Slots), func(s resolute.Slot) bool { return !slices.Contains(p.SlotIDs, s.ID) })
	}
	return agents
}

// ResourcePools describes the pools, their schedulers and their slots.
func (x *Experiments) ResourcePools() []resolute.ResourcePool {
	slotType := x.rm.SlotType()
	var out []resolute.ResourcePool
	for _, p := range x.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.opts.ComputePool, DefaultAux: p.Name == x.opts.AuxPool}
		for _, a := range x.poolAgents(p) {
			for _, sl := range a.Slots {
				rp.Slots = append(rp.Slots, sl)
				if sl.AllocationID != "" || sl.Foreign {
					rp.SlotsUsed++
				}
			}
		}
		out = append(out, rp)
	}
	return out
}
