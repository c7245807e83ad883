package control

import (
	"context"
	"strconv"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
)

// DisableSlot stops placing new work on one slot of an agent, as `det slot
// disable AGENT SLOT` does: administrators only. With drain the allocation
// holding it finishes; without, a trial there is asked to checkpoint and
// move (preempted) and another task is killed. The slot is its number on
// the agent as det slot list shows it, on a machine or a Kubernetes node
// alike.
func (s *Cluster) DisableSlot(ctx context.Context, a authz.Actor, agentID string, slotID int, drain bool) (resolute.SlotStateResponse, error) {
	out := resolute.SlotStateResponse{AgentID: agentID, SlotID: slotID, Draining: drain, Allocations: []string{}}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return out, err
	}
	held, err := s.slotAllocations(agentID, slotID)
	if err != nil {
		return out, err
	}
	if err := s.db.DisableSlot(ctx, agentID, slotID, drain, a.UserID()); err != nil {
		return out, err
	}
	out.Allocations = held
	if !drain {
		if err := s.evict(ctx, held, "slot "+strconv.Itoa(slotID)+" of agent "+agentID, "slot"); err != nil {
			return out, err
		}
	}
	s.adm.Wake()
	return out, nil
}

// EnableSlot lets a slot take new work again: administrators only.
func (s *Cluster) EnableSlot(ctx context.Context, a authz.Actor, agentID string, slotID int) (resolute.SlotStateResponse, error) {
	out := resolute.SlotStateResponse{AgentID: agentID, SlotID: slotID, Enabled: true, Allocations: []string{}}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return out, err
	}
	held, err := s.slotAllocations(agentID, slotID)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		// A slot of a node deleted (or a machine shrunk) while disabled can
		// still be enabled, once.
		states, serr := s.db.SlotStates(ctx)
		if _, disabled := states[agentID][slotID]; serr != nil || !disabled {
			return out, err
		}
		held, err = []string{}, nil
	}
	if err != nil {
		return out, err
	}
	out.Allocations = held
	if err := s.db.EnableSlot(ctx, agentID, slotID); err != nil {
		return out, err
	}
	s.adm.Wake()
	return out, nil
}

// slotAllocations are the allocations holding a slot the resource manager
// knows (at most one); not_found for an agent or slot it does not.
func (s *Cluster) slotAllocations(agentID string, slotID int) ([]string, error) {
	if s.c == nil {
		return nil, resolute.Errorf(resolute.EUnavailable, "this master runs no resource manager")
	}
	for _, ag := range s.c.rm.Agents("") {
		if ag.ID != agentID {
			continue
		}
		for _, sl := range ag.Slots {
			if sl.ID != slotID {
				continue
			}
			if sl.AllocationID != "" {
				return []string{sl.AllocationID}, nil
			}
			return []string{}, nil
		}
		return nil, resolute.Errorf(resolute.ENotFound, "slot %d of agent %s not found; det slot list shows the slots", slotID, agentID)
	}
	return nil, resolute.Errorf(resolute.ENotFound, "agent %s not found; det agent list shows the agents", agentID)
}

// withSlotStates marks, in place, each slot of the agents enabled unless an
// administrator disabled it, and draining when so disabled with --drain.
// agentOf names a slot's agent.
func withSlotStates(states map[string]map[int]resolute.SlotState, slots []resolute.Slot, agentOf func(resolute.Slot) string) {
	for i, sl := range slots {
		st, off := states[agentOf(sl)][sl.ID]
		slots[i].Enabled, slots[i].Draining = !off, off && st.Draining
	}
}
