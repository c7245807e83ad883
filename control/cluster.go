package control

import (
	"github.com/resolute-ml/resolute"
)

// Agents lists the machines and their slots: Kubernetes nodes, or the
// master's own machine.
func (x *Queue) Agents() []resolute.Agent { return x.c.rm.Agents("") }

// Pools are the resource pools this master schedules.
func (x *Queue) Pools() []Pool { return x.c.opts.Pools }

// ResourcePools describes the pools, their schedulers and their slots
// (every slot Enabled: ResourcePoolsFor reads which are not).
func (x *Queue) ResourcePools() []resolute.ResourcePool { return x.resourcePools(nil) }

// resourcePools is ResourcePools with the slots' states (db.SlotStates).
func (x *Queue) resourcePools(states map[string]map[int]resolute.SlotState) []resolute.ResourcePool {
	slotType := x.c.rm.SlotType()
	var out []resolute.ResourcePool
	for _, p := range x.c.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.c.opts.ComputePool, DefaultAux: p.Name == x.c.opts.AuxPool}
		for _, a := range x.c.poolAgents(p) {
			withSlotStates(states, a.Slots, func(resolute.Slot) string { return a.ID })
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
