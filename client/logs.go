package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/resolute-ml/resolute"
)

// LogQuery is what to read of a trial's or task's logs; the master applies
// every filter (GET .../logs query parameters, as Determined's).
type LogQuery struct {
	Follow bool
	// Head is the first N lines, Tail the last N; 0 for all. Give one.
	Head, Tail int
	Level      string // this level and above, "" for all
	Search     string // lines containing this text, "" for all
	// Before and After bound the lines' times; zero for no bound.
	Before, After time.Time
	Ranks         []int    // only these ranks
	Sources       []string // only these sources: "task", "master"
	StdTypes      []string // only these streams: "stdout", "stderr"
	// AgentIDs and ContainerIDs keep only the lines printed on these agents
	// and in these containers (as det agent list and the lines name them).
	AgentIDs, ContainerIDs []string
}

// values is q as the logs endpoints' query parameters.
func (q LogQuery) values() url.Values {
	v := url.Values{}
	if q.Follow {
		v.Set("follow", "true")
	}
	if q.Head > 0 {
		v.Set("limit", strconv.Itoa(q.Head))
	}
	if q.Tail > 0 {
		v.Set("limit", strconv.Itoa(q.Tail))
		v.Set("order_by", "ORDER_BY_DESC")
	}
	if q.Level != "" {
		v.Set("level", q.Level)
	}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if !q.Before.IsZero() {
		v.Set("timestamp_before", q.Before.UTC().Format(time.RFC3339Nano))
	}
	if !q.After.IsZero() {
		v.Set("timestamp_after", q.After.UTC().Format(time.RFC3339Nano))
	}
	for _, r := range q.Ranks {
		v.Add("rank_ids", strconv.Itoa(r))
	}
	for _, s := range q.Sources {
		v.Add("sources", s)
	}
	for _, s := range q.StdTypes {
		v.Add("stdtypes", s)
	}
	for _, s := range q.AgentIDs {
		v.Add("agent_ids", s)
	}
	for _, s := range q.ContainerIDs {
		v.Add("container_ids", s)
	}
	return v
}

// TrialLogsQuery calls fn with each line of a trial's logs that q asks for
// (GET /api/v1/trials/{id}/logs). With q.Follow it waits for new lines
// until the trial ends or ctx is canceled; a canceled follow is not an
// error.
func (c *Client) TrialLogsQuery(ctx context.Context, id int64, q LogQuery, fn func(resolute.TaskLog) error) error {
	return c.readLogs(ctx, idPath("/api/v1/trials/%d/logs", id), q, fn)
}

// TaskLogsQuery is TrialLogsQuery for a command, notebook, shell or
// TensorBoard (GET /api/v1/tasks/{id}/logs).
func (c *Client) TaskLogsQuery(ctx context.Context, id string, q LogQuery, fn func(resolute.TaskLog) error) error {
	return c.readLogs(ctx, "/api/v1/tasks/"+url.PathEscape(id)+"/logs", q, fn)
}

func (c *Client) readLogs(ctx context.Context, path string, q LogQuery, fn func(resolute.TaskLog) error) error {
	// Logs can be long even without follow: no overall timeout.
	resp, err := c.send(ctx, c.stream, http.MethodGet, path, q.values(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = readResults(resp.Body, fn)
	if q.Follow && ctx.Err() != nil {
		return nil
	}
	return err
}
