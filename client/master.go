package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// Info returns the master's version and cluster from GET /info, which needs
// no session.
func (c *Client) Info(ctx context.Context) (resolute.MasterInfo, error) {
	var out resolute.MasterInfo
	err := c.do(ctx, http.MethodGet, "/info", nil, nil, &out)
	return out, err
}

// Master returns the master's description from GET /api/v1/master.
func (c *Client) Master(ctx context.Context) (resolute.MasterInfo, error) {
	var out resolute.MasterInfo
	err := c.do(ctx, http.MethodGet, "/api/v1/master", nil, nil, &out)
	return out, err
}

// MasterLogs reads GET /api/v1/master/logs (administrators) and calls fn for
// each line: the last limit lines (all kept lines when limit is 0), then,
// when follow is set, new lines until ctx ends or fn returns an error.
// A followed stream has no timeout; cancel ctx to stop it, which returns nil.
func (c *Client) MasterLogs(ctx context.Context, follow bool, limit int, fn func(resolute.LogEntry) error) error {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	hc := c.http
	if follow {
		q.Set("follow", "true")
		hc = c.stream
	}
	resp, err := c.send(ctx, hc, http.MethodGet, "/api/v1/master/logs", q, nil)
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
