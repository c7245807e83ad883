package views

import "github.com/resolute-ml/resolute"

// Terminal is the page of one terminal into a shell, GET /tasks/{id}/terminal:
// xterm.js filling the window, talking to SocketPath.
type Terminal struct {
	Asset func(name string) string
	// XTerm says xterm.js is embedded (after `make web`).
	XTerm      bool
	Task       resolute.Task
	PagePath   string // this page: "new terminal" opens it again in a new tab
	SocketPath string // the terminal's websocket
}
