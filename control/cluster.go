package control

import (
	"github.com/resolute-ml/resolute"
)

// SlotInfo describes the resource manager's slots, for the cluster view.
type SlotInfo interface {
	// SlotsInfo lists every slot: id, type (cpu, cuda), device name and the
	// allocation holding it ("" when free).
	SlotsInfo() []resolute.Slot
	SlotType() string
}

// AgentInfo describes the machines of resource managers with many (the
// nodes of Kubernetes), for the cluster view.
type AgentInfo interface {
	AgentsInfo() []resolute.Agent
	SlotType() string
}

// Agents lists the machines and their slots: Kubernetes nodes, or the local
// resource manager's one machine ("local"), whose slots are in every pool.
func (x *Experiments) Agents() []resolute.Agent {
	if ai, ok := x.rm.(AgentInfo); ok {
		return ai.AgentsInfo()
	}
	a := resolute.Agent{ID: localAgent}
	if si, ok := x.rm.(SlotInfo); ok {
		a.Slots = si.SlotsInfo()
	}
	return []resolute.Agent{a}
}

// ResourcePools describes the pools, their schedulers and their slots.
func (x *Experiments) ResourcePools() []resolute.ResourcePool {
	if ai, ok := x.rm.(AgentInfo); ok {
		return x.agentPools(ai.AgentsInfo(), ai.SlotType())
	}
	var all []resolute.Slot
	slotType := "cpu"
	if si, ok := x.rm.(SlotInfo); ok {
		all, slotType = si.SlotsInfo(), si.SlotType()
	}
	byID := map[int]resolute.Slot{}
	for _, sl := range all {
		byID[sl.ID] = sl
	}
	var out []resolute.ResourcePool
	for _, p := range x.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.opts.ComputePool, DefaultAux: p.Name == x.opts.AuxPool}
		ids := p.SlotIDs
		if ids == nil {
			for _, sl := range all {
				ids = append(ids, sl.ID)
			}
		}
		for _, id := range ids {
			sl, ok := byID[id]
			if !ok {
				sl = resolute.Slot{ID: id, Device: slotType}
			}
			rp.Slots = append(rp.Slots, sl)
			if sl.AllocationID != "" {
				rp.SlotsUsed++
			}
		}
		out = append(out, rp)
	}
	return out
}

// agentPools are the pools with the slots of their agents.
func (x *Experiments) agentPools(agents []resolute.Agent, slotType string) []resolute.ResourcePool {
	var out []resolute.ResourcePool
	for _, p := range x.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.opts.ComputePool, DefaultAux: p.Name == x.opts.AuxPool}
		for _, a := range agents {
			if a.ResourcePool != p.Name {
				continue
			}
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
