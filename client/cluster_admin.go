package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// MasterConfig returns the master's configuration with its secrets masked
// (GET /api/v1/master/config, administrators).
func (c *Client) MasterConfig(ctx context.Context) (map[string]any, error) {
	var out struct {
		Config map[string]any `json:"config"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/master/config", nil, nil, &out)
	return out.Config, err
}

// ClusterMessage returns the cluster-wide message, nil when there is none
// (GET /api/v1/master/cluster_message).
func (c *Client) ClusterMessage(ctx context.Context) (*resolute.ClusterMessage, error) {
	var out resolute.ClusterMessageResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/master/cluster_message", nil, nil, &out)
	return out.ClusterMessage, err
}

// SetClusterMessage sets the cluster-wide message (PUT
// /api/v1/master/cluster_message, administrators).
func (c *Client) SetClusterMessage(ctx context.Context, req resolute.SetClusterMessageRequest) (resolute.ClusterMessage, error) {
	var out resolute.ClusterMessageResponse
	err := c.do(ctx, http.MethodPut, "/api/v1/master/cluster_message", nil, req, &out)
	if out.ClusterMessage == nil {
		return resolute.ClusterMessage{}, err
	}
	return *out.ClusterMessage, err
}

// ClearClusterMessage removes the cluster-wide message (DELETE
// /api/v1/master/cluster_message, administrators).
func (c *Client) ClearClusterMessage(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/master/cluster_message", nil, nil, nil)
}

// EnableAgent lets an agent take new work again (POST
// /api/v1/agents/{id}/enable, administrators).
func (c *Client) EnableAgent(ctx context.Context, id string) (resolute.AgentStateResponse, error) {
	var out resolute.AgentStateResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/agents/"+url.PathEscape(id)+"/enable", nil, struct{}{}, &out)
	return out, err
}

// DisableAgent stops placing work on an agent; with drain what runs there
// finishes, without it leaves (POST /api/v1/agents/{id}/disable,
// administrators).
func (c *Client) DisableAgent(ctx context.Context, id string, drain bool) (resolute.AgentStateResponse, error) {
	var out resolute.AgentStateResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/agents/"+url.PathEscape(id)+"/disable", nil, resolute.DisableAgentRequest{Drain: drain}, &out)
	return out, err
}

// EnableSlot lets a slot of an agent take new work again (POST
// /api/v1/agents/{id}/slots/{slotId}/enable, administrators).
func (c *Client) EnableSlot(ctx context.Context, agentID string, slotID int) (resolute.SlotStateResponse, error) {
	var out resolute.SlotStateResponse
	err := c.do(ctx, http.MethodPost, slotPath(agentID, slotID, "enable"), nil, struct{}{}, &out)
	return out, err
}

// DisableSlot stops placing work on a slot of an agent; with drain what
// holds it finishes, without it leaves (POST
// /api/v1/agents/{id}/slots/{slotId}/disable, administrators).
func (c *Client) DisableSlot(ctx context.Context, agentID string, slotID int, drain bool) (resolute.SlotStateResponse, error) {
	var out resolute.SlotStateResponse
	err := c.do(ctx, http.MethodPost, slotPath(agentID, slotID, "disable"), nil, resolute.DisableSlotRequest{Drain: drain}, &out)
	return out, err
}

func slotPath(agentID string, slotID int, verb string) string {
	return "/api/v1/agents/" + url.PathEscape(agentID) + "/slots/" + strconv.Itoa(slotID) + "/" + verb
}

// AllocationAggregated returns historical usage a day (or, monthly, a
// month) at a time from startDate to endDate, YYYY-MM-DD, both included
// (GET /api/v1/resources/allocation/aggregated).
func (c *Client) AllocationAggregated(ctx context.Context, startDate, endDate string, monthly bool) ([]resolute.AllocationAggregate, error) {
	q := url.Values{"start_date": {startDate}, "end_date": {endDate}, "period": {resolute.PeriodDaily}}
	if monthly {
		q.Set("period", resolute.PeriodMonthly)
	}
	var out resolute.AllocationAggregatedResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/resources/allocation/aggregated", q, nil, &out)
	return out.ResourceEntries, err
}

// DeleteTensorBoardFiles deletes an experiment's TensorBoard files from its
// checkpoint storage and returns the id of the task that does it (DELETE
// /api/v1/experiments/{id}/tensorboard-files).
func (c *Client) DeleteTensorBoardFiles(ctx context.Context, experimentID int64) (string, error) {
	var out struct {
		TaskID string `json:"taskId"`
	}
	err := c.do(ctx, http.MethodDelete, idPath("/api/v1/experiments/%d/tensorboard-files", experimentID), nil, nil, &out)
	return out.TaskID, err
}
