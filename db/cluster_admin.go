package db

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// ClusterMessage returns the cluster-wide message; not_found when there is
// none.
func (q *Queries) ClusterMessage(ctx context.Context) (resolute.ClusterMessage, error) {
	m, err := q.q.GetClusterMessage(ctx)
	if err != nil {
		return resolute.ClusterMessage{}, translate(err, "cluster message")
	}
	return clusterMessage(m), nil
}

// SetClusterMessage replaces the cluster-wide message.
func (q *Queries) SetClusterMessage(ctx context.Context, message string, start time.Time, end *time.Time, by int64) (resolute.ClusterMessage, error) {
	p := gen.SetClusterMessageParams{Message: message, StartTime: start, EndTime: end}
	if by != 0 {
		p.CreatedBy = &by
	}
	m, err := q.q.SetClusterMessage(ctx, p)
	if err != nil {
		return resolute.ClusterMessage{}, translate(err, "cluster message")
	}
	return clusterMessage(m), nil
}

// ClearClusterMessage removes the cluster-wide message, if any.
func (q *Queries) ClearClusterMessage(ctx context.Context) error {
	return translate(q.q.DeleteClusterMessage(ctx), "cluster message")
}

func clusterMessage(m gen.ClusterMessage) resolute.ClusterMessage {
	return resolute.ClusterMessage{Message: m.Message, StartTime: m.StartTime, EndTime: m.EndTime, CreatedTime: m.CreatedTime}
}

// AgentStates lists the disabled agents, by id.
func (q *Queries) AgentStates(ctx context.Context) (map[string]resolute.AgentState, error) {
	rows, err := q.q.ListAgentStates(ctx)
	if err != nil {
		return nil, translate(err, "agent states")
	}
	out := make(map[string]resolute.AgentState, len(rows))
	for _, r := range rows {
		out[r.AgentID] = resolute.AgentState{AgentID: r.AgentID, Draining: r.Draining, DisabledAt: r.DisabledAt}
	}
	return out, nil
}

// DisableAgent records that an agent takes no new work.
func (q *Queries) DisableAgent(ctx context.Context, agentID string, drain bool, by int64) error {
	p := gen.DisableAgentParams{AgentID: agentID, Draining: drain}
	if by != 0 {
		p.DisabledBy = &by
	}
	_, err := q.q.DisableAgent(ctx, p)
	return translate(err, "agent %s", agentID)
}

// EnableAgent lets an agent take work again; enabling an enabled agent is
// no change.
func (q *Queries) EnableAgent(ctx context.Context, agentID string) error {
	_, err := q.q.EnableAgent(ctx, agentID)
	return translate(err, "agent %s", agentID)
}

// SlotStates lists the disabled slots, by agent and slot.
func (q *Queries) SlotStates(ctx context.Context) (map[string]map[int]resolute.SlotState, error) {
	rows, err := q.q.ListSlotStates(ctx)
	if err != nil {
		return nil, translate(err, "slot states")
	}
	out := map[string]map[int]resolute.SlotState{}
	for _, r := range rows {
		if out[r.AgentID] == nil {
			out[r.AgentID] = map[int]resolute.SlotState{}
		}
		out[r.AgentID][int(r.SlotID)] = resolute.SlotState{AgentID: r.AgentID, SlotID: int(r.SlotID), Draining: r.Draining, DisabledAt: r.DisabledAt}
	}
	return out, nil
}

// DisableSlot records that a slot takes no new work.
func (q *Queries) DisableSlot(ctx context.Context, agentID string, slotID int, drain bool, by int64) error {
	p := gen.DisableSlotParams{AgentID: agentID, SlotID: int32(slotID), Draining: drain}
	if by != 0 {
		p.DisabledBy = &by
	}
	_, err := q.q.DisableSlot(ctx, p)
	return translate(err, "slot %d of agent %s", slotID, agentID)
}

// EnableSlot lets a slot take work again; enabling an enabled slot is no
// change.
func (q *Queries) EnableSlot(ctx context.Context, agentID string, slotID int) error {
	_, err := q.q.EnableSlot(ctx, gen.EnableSlotParams{AgentID: agentID, SlotID: int32(slotID)})
	return translate(err, "slot %d of agent %s", slotID, agentID)
}

// UsageRow is the slot-seconds one user used in one pool and workspace in
// one period.
type UsageRow struct {
	PeriodStart    time.Time
	Username, Pool string
	Workspace      string
	SlotSeconds    float64
}

// AllocationUsage sums the slot-seconds of allocations that ran in each
// period [starts[i], ends[i]), by user, pool and workspace.
func (q *Queries) AllocationUsage(ctx context.Context, starts, ends []time.Time) ([]UsageRow, error) {
	if len(starts) == 0 {
		return nil, nil
	}
	rows, err := q.q.AllocationUsage(ctx, gen.AllocationUsageParams{Starts: starts, Ends: ends, Since: starts[0], Until: ends[len(ends)-1]})
	if err != nil {
		return nil, translate(err, "allocation usage")
	}
	out := make([]UsageRow, len(rows))
	for i, r := range rows {
		out[i] = UsageRow{PeriodStart: r.PeriodStart, Username: r.Username, Pool: r.Pool, Workspace: r.Workspace, SlotSeconds: r.SlotSeconds}
	}
	return out, nil
}
