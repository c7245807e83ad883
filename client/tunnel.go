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
	u, err := url.Parse(c.base + "/api/v1/tasks/" + url.PathEscape(id) + "/tunnel")
	if err != nil {
		return nil, err
	}
	if port != 0 {
		u.RawQuery = "port=" + strconv.Itoa(port)
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
		return nil, resolute.Errorf(resolute.EUnavailable, "cannot open a tunnel at %s: %v", c.base, err)
	}
	conn.SetReadLimit(1 << 20)
	return websocket.NetConn(context.Background(), conn, websocket.MessageBinary), nil
}
