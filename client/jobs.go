package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// JobQueue lists the jobs of a resource pool ("" for every pool) in queue
// order, with the jobs ahead of each and why it waits
// (GET /api/v1/job-queues[?resource_pool=]).
func (c *Client) JobQueue(ctx context.Context, pool string) ([]resolute.Job, error) {
	q := url.Values{}
	if pool != "" {
		q.Set("resource_pool", pool)
	}
	var out resolute.JobQueueResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/job-queues", q, nil, &out)
	return out.Jobs, err
}

// UpdateJobQueue changes priorities, weights and pools of jobs, and moves
// them ahead of or behind others, all at once (POST /api/v1/job-queues).
func (c *Client) UpdateJobQueue(ctx context.Context, updates []resolute.QueueControl) error {
	return c.do(ctx, http.MethodPost, "/api/v1/job-queues", nil, resolute.UpdateJobQueueRequest{Updates: updates}, nil)
}

// ResourcePools lists the resource pools with their schedulers and slots
// (GET /api/v1/resource-pools).
func (c *Client) ResourcePools(ctx context.Context) ([]resolute.ResourcePool, error) {
	var out resolute.ResourcePoolsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/resource-pools", nil, nil, &out)
	return out.ResourcePools, err
}

// Agents lists the machines (Kubernetes nodes) with their slots
// (GET /api/v1/agents).
func (c *Client) Agents(ctx context.Context) ([]resolute.Agent, error) {
	var out resolute.AgentsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/agents", nil, nil, &out)
	return out.Agents, err
}
