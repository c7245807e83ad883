package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// Trial returns a trial with its latest metrics of each group
// (GET /api/v1/trials/{id}).
func (c *Client) Trial(ctx context.Context, id int64) (resolute.TrialResponse, error) {
	var out resolute.TrialResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/trials/%d", id), nil, nil, &out)
	return out, err
}

// TrialCheckpoints lists a trial's checkpoints, each with the validation
// metrics of its step (GET /api/v1/trials/{id}/checkpoints).
func (c *Client) TrialCheckpoints(ctx context.Context, id int64) ([]resolute.Checkpoint, error) {
	var out resolute.CheckpointsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/trials/%d/checkpoints", id), nil, nil, &out)
	return out.Checkpoints, err
}

// TrialMetrics lists a trial's reports of one metric group, "training" or
// "validation" (the default when group is "")
// (GET /api/v1/trials/{id}/metrics?group=).
func (c *Client) TrialMetrics(ctx context.Context, id int64, group string) ([]resolute.MetricsReport, error) {
	q := url.Values{}
	if group != "" {
		q.Set("group", group)
	}
	var out resolute.MetricsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/trials/%d/metrics", id), q, nil, &out)
	return out.Metrics, err
}

// KillTrial kills one trial (POST /api/v1/trials/{id}/kill).
func (c *Client) KillTrial(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/trials/%d/kill", id), nil, nil, nil)
}

// TrialLogs calls fn with each line of a trial's logs
// (GET /api/v1/trials/{id}/logs), keeping only lines of level (when not "")
// that contain search (when not ""). With follow it waits for new lines
// until the trial ends or ctx is canceled; a canceled follow is not an
// error.
func (c *Client) TrialLogs(ctx context.Context, id int64, follow bool, level, search string, fn func(resolute.TaskLog) error) error {
	q := url.Values{}
	if level != "" {
		q.Set("level", level)
	}
	if search != "" {
		q.Set("search", search)
	}
	// Logs can be long even without follow: no overall timeout.
	if follow {
		q.Set("follow", "true")
	}
	resp, err := c.send(ctx, c.stream, http.MethodGet, idPath("/api/v1/trials/%d/logs", id), q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = readResults(resp.Body, fn)
	if follow && ctx.Err() != nil {
		return nil
	}
	return err
}

// readResults decodes newline-delimited {"result": T} or {"error": ...}
// objects until the end of r.
func readResults[T any](r io.Reader, fn func(T) error) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Result *T                  `json:"result"`
			Error  *resolute.ErrorBody `json:"error"`
		}
		err := dec.Decode(&msg)
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read log stream: %w", err)
		}
		switch {
		case msg.Error != nil:
			return &resolute.Error{Code: msg.Error.Code, Message: msg.Error.Message}
		case msg.Result != nil:
			if err := fn(*msg.Result); err != nil {
				return err
			}
		}
	}
}
