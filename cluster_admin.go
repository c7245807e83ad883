package resolute

import "time"

// ClusterMessage is the cluster-wide message administrators set (Determined's
// GET /api/v1/master/cluster_message): a banner on every page between
// StartTime and EndTime (nil: until cleared).
type ClusterMessage struct {
	Message     string     `json:"message"`
	StartTime   time.Time  `json:"startTime"`
	EndTime     *time.Time `json:"endTime,omitempty"`
	CreatedTime time.Time  `json:"createdTime"`
}

// ActiveAt says whether the message shows at t.
func (m ClusterMessage) ActiveAt(t time.Time) bool {
	return !t.Before(m.StartTime) && (m.EndTime == nil || t.Before(*m.EndTime))
}

// ClusterMessageResponse is GET /api/v1/master/cluster_message: the
// message, or none.
type ClusterMessageResponse struct {
	ClusterMessage *ClusterMessage `json:"clusterMessage"`
}

// SetClusterMessageRequest is PUT /api/v1/master/cluster_message, as
// Determined's: the message, when it starts (default now), and when it
// ends: at EndTime, or Duration (a Go duration, or days "5d" and weeks
// "2w") after its start; neither, until cleared.
type SetClusterMessageRequest struct {
	Message   string     `json:"message"`
	StartTime *time.Time `json:"startTime,omitempty"`
	EndTime   *time.Time `json:"endTime,omitempty"`
	Duration  string     `json:"duration,omitempty"`
}

// AgentState is an agent an administrator disabled (det agent disable):
// nothing new is placed on it; Draining leaves what runs there to finish.
type AgentState struct {
	AgentID    string    `json:"agentId"`
	Draining   bool      `json:"draining"`
	DisabledAt time.Time `json:"disabledAt"`
}

// DisableAgentRequest is POST /api/v1/agents/{id}/disable.
type DisableAgentRequest struct {
	Drain bool `json:"drain"`
}

// AgentStateResponse answers POST /api/v1/agents/{id}/enable and disable:
// the agent as it now is, with the allocations still on it.
type AgentStateResponse struct {
	AgentID  string `json:"agentId"`
	Enabled  bool   `json:"enabled"`
	Draining bool   `json:"draining"`
	// Allocations are the allocations running on the agent: a drained
	// agent's, left to finish; a disabled one's, asked to leave.
	Allocations []string `json:"allocations"`
}

// SlotState is a slot an administrator disabled (det slot disable AGENT
// SLOT): nothing new is placed on it; Draining leaves the allocation
// holding it to finish.
type SlotState struct {
	AgentID    string    `json:"agentId"`
	SlotID     int       `json:"slotId"`
	Draining   bool      `json:"draining"`
	DisabledAt time.Time `json:"disabledAt"`
}

// DisableSlotRequest is POST /api/v1/agents/{agentId}/slots/{slotId}/disable,
// as Determined's.
type DisableSlotRequest struct {
	Drain bool `json:"drain"`
}

// SlotStateResponse answers POST /api/v1/agents/{agentId}/slots/{slotId}/
// enable and disable: the slot as it now is, with the allocations holding
// it (at most one).
type SlotStateResponse struct {
	AgentID  string `json:"agentId"`
	SlotID   int    `json:"slotId"`
	Enabled  bool   `json:"enabled"`
	Draining bool   `json:"draining"`
	// Allocations are the allocations holding the slot: a drained slot's,
	// left to finish; a disabled one's, asked to leave.
	Allocations []string `json:"allocations"`
}

// The aggregation periods of GET /api/v1/resources/allocation/aggregated,
// as Determined names them.
const (
	PeriodDaily   = "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY"
	PeriodMonthly = "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY"
)

// AllocationAggregate is one period of historical usage (Determined's
// v1ResourceAllocationAggregatedEntry): slot-seconds of the allocations
// that ran then, in all and by user, resource pool and workspace.
type AllocationAggregate struct {
	PeriodStart    string             `json:"periodStart"` // YYYY-MM-DD, UTC
	Period         string             `json:"period"`      // PeriodDaily or PeriodMonthly
	Seconds        float64            `json:"seconds"`
	ByUsername     map[string]float64 `json:"byUsername"`
	ByResourcePool map[string]float64 `json:"byResourcePool"`
	ByWorkspace    map[string]float64 `json:"byWorkspace"`
}

// AllocationAggregatedResponse is GET /api/v1/resources/allocation/aggregated.
type AllocationAggregatedResponse struct {
	ResourceEntries []AllocationAggregate `json:"resourceEntries"`
}
