package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	err = readStream(resp.Body, fn)
	if follow && ctx.Err() != nil {
		return nil
	}
	return err
}

// readStream decodes newline-delimited {"result": ...} or {"error": ...}
// objects until the end of r.
func readStream(r io.Reader, fn func(resolute.LogEntry) error) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Result *resolute.LogEntry  `json:"result"`
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
