package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sync"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
)

// Terminal is one terminal into a shell, over the websocket of
// GET /tasks/{id}/terminal/ws: a login shell of its own in the shell's
// allocation, with a PTY. Read returns its output and io.EOF once its shell
// has exited (ExitCode then says how); Write sends keystrokes. Read is for
// one goroutine; Write, Resize and Close may be called from others.
type Terminal struct {
	conn *websocket.Conn
	ctx  context.Context // the connection's: cancelled by Close

	cancel  context.CancelFunc
	pending []byte // the rest of the last output message

	mu     sync.Mutex
	exit   int
	exited bool
}

// Close codes of a terminal's websocket, as the master sends them.
const (
	terminalNotRunning websocket.StatusCode = 4409
	terminalGone       websocket.StatusCode = 4410
)

// OpenTerminal opens a new terminal into shell id.
func (c *Client) OpenTerminal(ctx context.Context, id string) (*Terminal, error) {
	conn, err := c.dial(ctx, "/tasks/"+url.PathEscape(id)+"/terminal/ws", nil, "a terminal")
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(4 << 20)
	tctx, cancel := context.WithCancel(context.Background())
	return &Terminal{conn: conn, ctx: tctx, cancel: cancel}, nil
}

// Read reads the terminal's output. It returns io.EOF once the terminal's
// shell has exited, and an *resolute.Error when the master closed the
// terminal otherwise: EGone once the shell task has ended, EConflict while it
// is not running yet.
func (t *Terminal) Read(p []byte) (int, error) {
	for len(t.pending) == 0 {
		typ, data, err := t.conn.Read(t.ctx)
		if err != nil {
			return 0, t.closed(err)
		}
		if typ == websocket.MessageBinary {
			t.pending = data
			continue
		}
		var msg struct {
			Type string `json:"type"`
			Code int    `json:"code"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Type == "exit" {
			t.mu.Lock()
			t.exit, t.exited = msg.Code, true
			t.mu.Unlock()
		}
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

// closed turns the end of the websocket into Read's error.
func (t *Terminal) closed(err error) error {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		if t.ctx.Err() != nil {
			return io.EOF // closed here
		}
		return resolute.Errorf(resolute.EUnavailable, "the terminal's connection was lost: %v", err)
	}
	switch ce.Code {
	case websocket.StatusNormalClosure:
		return io.EOF
	case terminalGone:
		return resolute.Errorf(resolute.EGone, "%s", ce.Reason)
	case terminalNotRunning:
		return resolute.Errorf(resolute.EConflict, "%s", ce.Reason)
	}
	msg := ce.Reason
	if msg == "" {
		msg = "closed (" + ce.Code.String() + ")"
	}
	return resolute.Errorf(resolute.EUnavailable, "the master closed the terminal: %s", msg)
}

// ExitCode returns the exit status of the terminal's shell, once it exited.
func (t *Terminal) ExitCode() (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exit, t.exited
}

// Write sends keystrokes (any bytes) to the terminal.
func (t *Terminal) Write(p []byte) (int, error) {
	if err := t.conn.Write(t.ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Resize sets the terminal's size in characters.
func (t *Terminal) Resize(cols, rows int) error {
	b, _ := json.Marshal(map[string]any{"type": "resize", "cols": cols, "rows": rows})
	return t.conn.Write(t.ctx, websocket.MessageText, b)
}

// Close hangs the terminal up: its shell gets SIGHUP; the shell task keeps
// running.
func (t *Terminal) Close() error {
	err := t.conn.Close(websocket.StatusNormalClosure, "")
	t.cancel()
	return err
}
