package client

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
)

// ShellSSHKeys returns a shell's SSH keys (GET /api/v1/shells/{id}/ssh):
// its owner's alone.
func (c *Client) ShellSSHKeys(ctx context.Context, id string) (resolute.TaskSSHKeys, error) {
	var out resolute.TaskSSHResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/shells/"+url.PathEscape(id)+"/ssh", nil, nil, &out)
	return out.Keys, err
}

// Tunnel opens a TCP connection through the master (GET
// /api/v1/tasks/{id}/tunnel) to a shell's sshd (port 0) or to one of a
// task's proxy_ports. Closing the connection ends the tunnel; ctx bounds
// only the opening.
func (c *Client) Tunnel(ctx context.Context, id string, port int) (net.Conn, error) {
	var q url.Values
	if port != 0 {
		q = url.Values{"port": {strconv.Itoa(port)}}
	}
	conn, err := c.dial(ctx, "/api/v1/tasks/"+url.PathEscape(id)+"/tunnel", q, "a tunnel")
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(1 << 20)
	return websocket.NetConn(context.Background(), conn, websocket.MessageBinary), nil
}

// dial opens a WebSocket to path (and query) on the master as the
// session; what names it when the master cannot be reached ("a tunnel").
func (c *Client) dial(ctx context.Context, path string, query url.Values, what string) (*websocket.Conn, error) {
	u, err := url.Parse(c.base + path)
	if err != nil {
		return nil, err
	}
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1) // http→ws, https→wss
	h := http.Header{"User-Agent": {c.userAgent}}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.stream, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, errorFrom(resp)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, resolute.Errorf(resolute.EUnavailable, "cannot open %s at %s: %v", what, c.base, err)
	}
	return conn, nil
}
