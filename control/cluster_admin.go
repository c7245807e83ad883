package control

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
)

// Cluster holds what administrators change about the cluster as a whole:
// the cluster-wide message, and which agents take new work.
type Cluster struct {
	db  *db.DB
	c   *core      // nil without a runner: agents cannot be changed
	adm *Admission // preemption timeouts, and waking the scheduler
	now func() time.Time
}

// SetMessage replaces the cluster-wide message (Determined's PUT
// /api/v1/master/cluster_message): administrators only. It starts at
// req.StartTime (default now) and ends at req.EndTime or req.Duration after
// its start, or when it is cleared.
func (s *Cluster) SetMessage(ctx context.Context, a authz.Actor, req resolute.SetClusterMessageRequest) (resolute.ClusterMessage, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return resolute.ClusterMessage{}, err
	}
	msg := strings.TrimSpace(req.Message)
	if msg == "" {
		return resolute.ClusterMessage{}, resolute.Errorf(resolute.EInvalid, "message: give the text to show")
	}
	start, end, err := messageWindow(s.now(), req)
	if err != nil {
		return resolute.ClusterMessage{}, err
	}
	return s.db.SetClusterMessage(ctx, msg, start, end, a.UserID())
}

// messageWindow is when a message shows: from its start (now when not
// given) to its end (nil: until cleared).
func messageWindow(now time.Time, req resolute.SetClusterMessageRequest) (time.Time, *time.Time, error) {
	start := now
	if req.StartTime != nil {
		start = *req.StartTime
	}
	end := req.EndTime
	if req.Duration != "" {
		if end != nil {
			return start, nil, resolute.Errorf(resolute.EInvalid, "endTime and duration: give one, not both")
		}
		d, err := parseLongDuration(req.Duration)
		if err != nil || d <= 0 {
			return start, nil, resolute.Errorf(resolute.EInvalid, "duration: expected a positive duration like 90m, 24h, 5d or 2w, got %q", req.Duration)
		}
		e := start.Add(d)
		end = &e
	}
	if end != nil && !end.After(start) {
		return start, nil, resolute.Errorf(resolute.EInvalid, "endTime: must be after the start, %s", start.UTC().Format(time.RFC3339))
	}
	return start, end, nil
}

// parseLongDuration is time.ParseDuration that also takes days and weeks
// ("5d", "2w", "1w2d3h"), as Determined's cluster messages do.
func parseLongDuration(s string) (time.Duration, error) {
	var total time.Duration
	for _, unit := range []struct {
		suffix string
		d      time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}} {
		if i := strings.Index(s, unit.suffix); i >= 0 {
			n, err := strconv.Atoi(s[:i])
			if err != nil {
				return 0, err
			}
			total += time.Duration(n) * unit.d
			s = s[i+1:]
		}
	}
	if s == "" {
		return total, nil
	}
	d, err := time.ParseDuration(s)
	return total + d, err
}

// ClearMessage removes the cluster-wide message: administrators only.
func (s *Cluster) ClearMessage(ctx context.Context, a authz.Actor) error {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return err
	}
	return s.db.ClearClusterMessage(ctx)
}

// DisableAgent stops placing new work on an agent (a machine, or a
// Kubernetes node), as `det agent disable` does: administrators only. With
// drain what runs there finishes; without, its trials are asked to
// checkpoint and move (preempted, as for a higher-priority job) and its
// commands, notebooks, shells and TensorBoards are killed.
func (s *Cluster) DisableAgent(ctx context.Context, a authz.Actor, agentID string, drain bool) (resolute.AgentStateResponse, error) {
	out := resolute.AgentStateResponse{AgentID: agentID, Draining: drain, Allocations: []string{}}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return out, err
	}
	held, err := s.agentAllocations(agentID)
	if err != nil {
		return out, err
	}
	if err := s.db.DisableAgent(ctx, agentID, drain, a.UserID()); err != nil {
		return out, err
	}
	out.Allocations = held
	if !drain {
		if err := s.evict(ctx, held, "agent "+agentID, "agent"); err != nil {
			return out, err
		}
	}
	s.adm.Wake()
	return out, nil
}

// evict asks the allocations held to leave what (an agent, a slot) was
// disabled: trials checkpoint and move (preempted, as for a
// higher-priority job) to another one of its kind; other tasks are killed.
func (s *Cluster) evict(ctx context.Context, held []string, what, kind string) error {
	if len(held) == 0 {
		return nil
	}
	live, err := s.db.LiveAllocations(ctx)
	if err != nil {
		return err
	}
	for _, al := range live {
		if !slices.Contains(held, al.ID) {
			continue
		}
		if al.TrialID != nil {
			deadline := s.now().Add(s.adm.preemptionTimeoutOf(ctx, al.ExperimentID))
			if _, err := s.db.RequestPreemption(ctx, al.ID, deadline); err != nil {
				return err
			}
			s.c.taskLog(ctx, al.Allocation, "INFO", what+" was disabled: checkpointing and moving to another "+kind)
			continue
		}
		s.c.taskLog(ctx, al.Allocation, "WARNING", what+" was disabled: the task is stopped")
		if err := s.c.rm.Kill(ctx, al.ID, s.c.opts.KillGrace); err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
			return err
		}
	}
	return nil
}

// EnableAgent lets an agent take new work again: administrators only.
func (s *Cluster) EnableAgent(ctx context.Context, a authz.Actor, agentID string) (resolute.AgentStateResponse, error) {
	out := resolute.AgentStateResponse{AgentID: agentID, Enabled: true, Allocations: []string{}}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return out, err
	}
	held, err := s.agentAllocations(agentID)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		// A node deleted while disabled can still be enabled, once.
		states, serr := s.db.AgentStates(ctx)
		if _, disabled := states[agentID]; serr != nil || !disabled {
			return out, err
		}
		held, err = []string{}, nil
	}
	if err != nil {
		return out, err
	}
	out.Allocations = held
	if err := s.db.EnableAgent(ctx, agentID); err != nil {
		return out, err
	}
	s.adm.Wake()
	return out, nil
}

// agentAllocations are the allocations holding slots of an agent the
// resource manager knows; not_found for another.
func (s *Cluster) agentAllocations(agentID string) ([]string, error) {
	if s.c == nil {
		return nil, resolute.Errorf(resolute.EUnavailable, "this master runs no resource manager")
	}
	var ids []string
	found := false
	for _, ag := range s.c.rm.Agents("") {
		if ag.ID != agentID {
			continue
		}
		found = true
		for _, sl := range ag.Slots {
			if sl.AllocationID != "" && !slices.Contains(ids, sl.AllocationID) {
				ids = append(ids, sl.AllocationID)
			}
		}
	}
	if !found {
		return nil, resolute.Errorf(resolute.ENotFound, "agent %s not found; det agent list shows the agents", agentID)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

// snapshotPools are the pools with their agents' slots as the scheduler
// may use them: every slot no foreign pod holds, and of a disabled agent,
// and of the disabled slots, only those allocations hold. allocs are the
// live allocations.
func (x *Admission) snapshotPools(ctx context.Context, allocs []db.LiveAllocation) ([]scheduler.Pool, error) {
	disabled, err := x.c.db.AgentStates(ctx)
	if err != nil {
		return nil, err
	}
	offSlots, err := x.c.db.SlotStates(ctx)
	if err != nil {
		return nil, err
	}
	held := map[string][]int{} // the slots live allocations hold, by agent
	for _, a := range allocs {
		for _, ref := range taskOfAllocation(a).Assigned {
			held[ref.Agent] = append(held[ref.Agent], ref.Slot)
		}
	}
	var pools []scheduler.Pool
	for _, p := range x.c.opts.Pools {
		var agents []scheduler.Agent
		for _, a := range x.c.poolAgents(p) {
			sa := scheduler.Agent{ID: a.ID}
			_, off := disabled[a.ID]
			sa.SlotIDs, sa.Disabled = usableSlots(a, off, offSlots[a.ID], held), off
			agents = append(agents, sa)
		}
		pools = append(pools, scheduler.Pool{Name: p.Name, Config: p.Scheduler, Agents: agents})
	}
	return pools, nil
}

// usableSlots are the slots of an agent the scheduler may use: none that
// a foreign pod holds; of a disabled agent (agentOff) and of its disabled
// slots (slotsOff), only those allocations hold, so that the scheduler
// places nothing new there while what runs keeps its slots. held are the
// slots of live allocations by agent, as the database records them.
func usableSlots(a resolute.Agent, agentOff bool, slotsOff map[int]resolute.SlotState, held map[string][]int) []int {
	var ids []int
	for _, sl := range a.Slots {
		if sl.Foreign {
			continue
		}
		_, slotOff := slotsOff[sl.ID]
		if (!agentOff && !slotOff) || sl.AllocationID != "" || slices.Contains(held[a.ID], sl.ID) {
			ids = append(ids, sl.ID)
		}
	}
	return ids
}
