package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/proxy"
	"github.com/resolute-ml/resolute/views"
)

// The terminals of shells: GET /tasks/{id}/terminal is a page with xterm.js,
// GET /tasks/{id}/terminal/ws its websocket. Each websocket runs its own
// login shell, with a PTY, in the shell task's allocation; closing it hangs
// the terminal up (SIGHUP to its process group) and leaves the task running.
//
// The protocol: binary messages are terminal bytes, both ways. Text messages
// are JSON control messages: {"type":"resize","cols":N,"rows":M} from the
// client; {"type":"exit","code":N} from the server when the terminal's
// process has exited, just before it closes the websocket normally. A
// websocket to a shell that has ended is closed with TerminalGone and the
// reason; one to a shell that does not run yet with TerminalNotRunning.

// Close codes of the terminal websocket besides the normal closure.
const (
	TerminalNotRunning websocket.StatusCode = 4409 // not started yet: try again later
	TerminalGone       websocket.StatusCode = 4410 // the shell has ended: do not retry
)

// TerminalControl is a text message of the terminal websocket.
type TerminalControl struct {
	Type string `json:"type"` // resize or exit
	Cols int    `json:"cols,omitempty"`
	Rows int    `json:"rows,omitempty"`
	Code int    `json:"code"` // exit: the process's exit status
}

// TerminalStream is one process started in an allocation: with a PTY, a
// terminal.
type TerminalStream = resolute.Stream

// Terminals starts processes in running allocations; every
// control.ResourceManager is one.
type Terminals interface {
	Exec(ctx context.Context, allocationID string, argv []string, tty bool) (TerminalStream, error)
}

// terminalPing is how often an open terminal is pinged, so that proxies
// between the client and the master keep an idle connection.
const terminalPing = 30 * time.Second

// loginShell is the command of each terminal: bash as a login shell where
// there is bash, else sh; TERM is xterm's whatever the master's is.
var loginShell = func() []string {
	sh := "sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		sh = "bash"
	}
	return []string{"env", "TERM=xterm-256color", sh, "-l"}
}()

// terminalTask loads the shell of {id} that the signed-in user may open:
// 404 unless it is a shell, 403 unless they own it or are an administrator.
func (s *Server) terminalTask(r *http.Request) (resolute.Task, error) {
	t, err := s.taskParam(r, "shells")
	if err != nil {
		return t, err
	}
	return t, authz.Can(actorFrom(r), authz.OpenTask, authz.Task(t))
}

// shellGone says why a shell's terminal cannot open: EGone once it ends.
func shellGone(t resolute.Task) error {
	if t.State != resolute.TaskTerminated && t.State != resolute.TaskTerminating {
		return nil
	}
	msg := "shell " + t.ID + " has ended"
	if t.EndReason != "" {
		msg += ": " + t.EndReason
	}
	return resolute.Errorf(resolute.EGone, "%s", msg)
}

// handleTerminalPage serves GET /tasks/{id}/terminal: one terminal into a
// shell that waits or runs; 410 once it has ended.
func (s *Server) handleTerminalPage(w http.ResponseWriter, r *http.Request) {
	t, err := s.terminalTask(r)
	if err == nil {
		err = shellGone(t)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TerminalPage(views.Terminal{
		Asset: s.assets.URL, XTerm: s.assets.Has("vendor/xterm.js"), Task: t,
		PagePath: "/tasks/" + t.ID + "/terminal", SocketPath: "/tasks/" + t.ID + "/terminal/ws",
	}))
}

// handleTerminalSocket serves GET /tasks/{id}/terminal/ws: the websocket of
// one terminal (see the protocol above), opened by the master's own pages
// or by clients that are not browsers (det shell).
func (s *Server) handleTerminalSocket(w http.ResponseWriter, r *http.Request) {
	err := proxy.CheckOrigin(r)
	var t resolute.Task
	if err == nil {
		t, err = s.terminalTask(r)
	}
	if err != nil {
		if resolute.ErrorCode(err) == resolute.EInternal {
			s.error(w, r, err)
			return
		}
		code := resolute.ErrorCode(err) // JSON, as the API's, for det
		writeJSON(w, statusOf(code), resolute.ErrorResponse{Error: resolute.ErrorBody{Code: code, Message: resolute.ErrorMessage(err)}})
		return
	}
	conn, err := websocket.Accept(w, r, nil) // checks Origin against Host too
	if err != nil {
		return // Accept has answered
	}
	conn.SetReadLimit(1 << 20) // a large paste
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stream, err := s.openTerminal(ctx, t.ID)
	if err != nil {
		code := websocket.StatusInternalError
		switch resolute.ErrorCode(err) {
		case resolute.EGone:
			code = TerminalGone
		case resolute.EConflict, resolute.ENotFound: // starting, or just ended
			code = TerminalNotRunning
		}
		conn.Close(code, closeReason(resolute.ErrorMessage(err)))
		return
	}
	defer stream.Close() // hangs up
	s.touch(t.ID)
	go func() { // the terminal's output
		defer cancel()
		buf := make([]byte, 32<<10)
		for {
			n, err := stream.Read(buf)
			if n > 0 {
				s.touch(t.ID)
				if conn.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
					return
				}
			}
			if err != nil {
				break
			}
		}
		if ctx.Err() != nil {
			return // the client left; the process may outlive its hangup
		}
		code, _ := stream.Wait()
		if cur, err := s.db.Task(context.WithoutCancel(ctx), t.ID); err == nil && shellGone(cur) != nil {
			conn.Close(TerminalGone, closeReason(resolute.ErrorMessage(shellGone(cur))))
			return
		}
		msg, _ := json.Marshal(TerminalControl{Type: "exit", Code: code})
		conn.Write(ctx, websocket.MessageText, msg)
		conn.Close(websocket.StatusNormalClosure, "exited")
	}()
	go func() { // keep-alive
		tick := time.NewTicker(terminalPing)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				pctx, pcancel := context.WithTimeout(ctx, terminalPing)
				err := conn.Ping(pctx)
				pcancel()
				if err != nil {
					cancel()
					return
				}
			}
		}
	}()
	s.terminalInput(ctx, conn, stream, t.ID)
	cancel()
	stream.Close()
	conn.CloseNow()
}

// openTerminal starts a login shell with a PTY in the shell's running
// allocation.
func (s *Server) openTerminal(ctx context.Context, taskID string) (TerminalStream, error) {
	t, err := s.db.Task(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if err := shellGone(t); err != nil {
		return nil, err
	}
	if s.terminals == nil {
		return nil, resolute.Errorf(resolute.EUnavailable, "this master opens no terminals")
	}
	allocs, err := s.db.LiveAllocations(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		if a.TaskID == t.ID && a.State == resolute.AllocationRunning {
			stream, err := s.terminals.Exec(ctx, a.ID, loginShell, true)
			if err != nil && resolute.ErrorCode(err) == resolute.EInternal {
				s.logger.Error("open terminal", "task", t.ID, "allocation", a.ID, "err", err)
			}
			return stream, err
		}
	}
	return nil, resolute.Errorf(resolute.EConflict, "shell %s is not running yet (%s)", t.ID, t.State)
}

// terminalInput copies the client's messages to the terminal until the
// websocket or the terminal closes.
func (s *Server) terminalInput(ctx context.Context, conn *websocket.Conn, stream TerminalStream, taskID string) {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		s.touch(taskID)
		if typ == websocket.MessageBinary {
			if _, err := stream.Write(data); err != nil {
				return
			}
			continue
		}
		var c TerminalControl
		if json.Unmarshal(data, &c) == nil && c.Type == "resize" && c.Cols > 0 && c.Rows > 0 && c.Cols < 1<<16 && c.Rows < 1<<16 {
			if err := stream.Resize(uint16(c.Cols), uint16(c.Rows)); err != nil && !errors.Is(err, os.ErrClosed) {
				s.logger.Warn("resize terminal", "task", taskID, "err", err)
			}
		}
	}
}

// touch records traffic of a task's terminal for its idle timeout.
func (s *Server) touch(taskID string) {
	if s.activity != nil {
		s.activity(taskID)
	}
}

// closeReason fits a reason into a close frame (123 bytes).
func closeReason(msg string) string {
	if len(msg) > 120 {
		msg = strings.ToValidUTF8(msg[:117], "") + "..."
	}
	return msg
}
