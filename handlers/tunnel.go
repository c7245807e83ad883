package handlers

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/proxy"
)

// Tunnels into tasks: GET /api/v1/tasks/{id}/tunnel[?port=N] is a websocket
// whose binary messages are the bytes of one TCP connection, both ways, to
// a shell's sshd (no port) or to one of a task's environment.proxy_ports.
// `det shell ssh-proxy` (ssh's ProxyCommand) and `det task tunnel` open it
// with the user's token; control.Tasks.Tunnel lets through the task's owner
// alone. Refusals come before the upgrade, as JSON errors.

// tunnelDial is how long the master tries to connect to the task's port.
const tunnelDial = 10 * time.Second

// handleAPIShellSSH serves GET /api/v1/shells/{id}/ssh: the shell's SSH
// keys, for its owner.
func (s *Server) handleAPIShellSSH(w http.ResponseWriter, r *http.Request) {
	k, err := s.svc.Tasks.SSHKeys(r.Context(), actorFrom(r), chi.URLParam(r, "id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resolute.TaskSSHResponse{Keys: k})
}

// handleAPITaskTunnel serves GET /api/v1/tasks/{id}/tunnel[?port=N]: see
// above.
func (s *Server) handleAPITaskTunnel(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	port := 0
	err := proxy.CheckOrigin(r)
	if p := r.URL.Query().Get("port"); p != "" && err == nil {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			err = resolute.Errorf(resolute.EInvalid, "port: expected a port number 1..65535, got %q", p)
		}
	}
	var addr string
	if err == nil {
		addr, err = s.svc.Tasks.Tunnel(r.Context(), actorFrom(r), id, port)
	}
	var target net.Conn
	if err == nil {
		d := net.Dialer{Timeout: tunnelDial}
		if target, err = d.DialContext(r.Context(), "tcp", addr); err != nil {
			s.logger.Info("tunnel into a task", "task", id, "port", port, "err", err)
			err = resolute.Errorf(resolute.EUnavailable, "%s does not answer on its port %s", id, portOf(addr))
		}
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer target.Close()
	conn, err := websocket.Accept(w, r, nil) // checks Origin against Host too
	if err != nil {
		return
	}
	conn.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ws := websocket.NetConn(ctx, conn, websocket.MessageBinary)
	defer ws.Close()
	s.touch(id)
	// The client's end of input half-closes the task's connection, which
	// may still answer; the task's end, or a failed write to the client,
	// ends the tunnel.
	go func() {
		copyTouching(target, ws, func() { s.touch(id) })
		target.(*net.TCPConn).CloseWrite()
	}()
	copyTouching(ws, target, func() { s.touch(id) })
}

// copyTouching copies src to dst until either fails, calling touch on
// each read, for the task's idle timeout.
func copyTouching(dst io.Writer, src io.Reader, touch func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			touch()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// portOf is addr's port.
func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
