package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/resolute-ml/resolute"
)

// Stream is a process started by Exec in an allocation: a terminal when it
// has a PTY, else its stdin, and its stdout and stderr merged. Read, Write
// and Close may be called from different goroutines.
type Stream struct {
	r, w      *os.File // the PTY master twice, or the pipes' own ends
	tty       bool
	pgid      int
	done      chan struct{}
	code      int
	err       error
	closeOnce sync.Once
}

// Read reads the process's output; it returns io.EOF once the process and
// everything holding its output have exited.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.tty && errors.Is(err, syscall.EIO) {
		err = io.EOF // Linux's way of saying the terminal's other side is gone
	}
	return n, err
}

// Write writes to the process's input.
func (s *Stream) Write(p []byte) (int, error) { return s.w.Write(p) }

// Resize sets the terminal's size; it does nothing without a terminal.
func (s *Stream) Resize(cols, rows uint16) error {
	if !s.tty {
		return nil
	}
	return resizePTY(s.r, cols, rows)
}

// Close hangs up: it sends SIGHUP to the process's group if it is running
// and closes the stream. Processes that ignore SIGHUP live until the
// allocation ends.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		if !isClosed(s.done) {
			_ = signalGroup(s.pgid, syscall.SIGHUP)
		}
		_ = s.r.Close()
		if s.w != s.r {
			_ = s.w.Close()
		}
	})
	return nil
}

// Wait waits for the process to exit and returns its exit status (128+N
// when signal N killed it); the error is set only when waiting failed.
func (s *Stream) Wait() (int, error) {
	<-s.done
	return s.code, s.err
}

// kill ends the process's group; the allocation is ending.
func (s *Stream) kill() {
	if !isClosed(s.done) {
		_ = signalGroup(s.pgid, syscall.SIGKILL)
	}
}

// Exec starts argv in a running allocation's work dir with its environment,
// in a process group of its own (a session with the PTY as its controlling
// terminal when tty). The process is killed when the allocation ends.
func (m *Manager) Exec(ctx context.Context, allocationID string, argv []string, tty bool) (resolute.Stream, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, resolute.Errorf(resolute.EInvalid, "a command is required")
	}
	a, err := m.lookup(allocationID)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone || a.pgid == 0 {
		return nil, resolute.Errorf(resolute.EConflict, "allocation %s is not running", allocationID)
	}
	if m.switchUsers && a.cred == nil {
		return nil, resolute.Errorf(resolute.EConflict, "allocation %s started before tasks ran as their own users; "+
			"its terminals would run as root: kill it and start it again", allocationID)
	}
	env := slices.Clone(a.env)
	if tty && !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }) {
		env = append(env, "TERM=xterm-256color")
	}
	path, err := lookPath(argv[0], env, a.workDir)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: a.workDir, Env: env}
	s := &Stream{tty: tty, done: make(chan struct{})}
	var childEnds []*os.File
	if tty {
		master, slave, err := openPTY()
		if err != nil {
			return nil, err
		}
		s.r, s.w = master, master
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if c := a.cred; c != nil {
			// As login does: the terminal is its user's, so programs that
			// open it by name (tmux's server does) can.
			if err := slave.Chown(c.UID, c.GID); err != nil {
				closeAll([]*os.File{master, slave})
				return nil, fmt.Errorf("exec in %s: give the terminal to uid %d: %w", allocationID, c.UID, err)
			}
		}
		childEnds = []*os.File{slave}
	} else {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			closeAll([]*os.File{inR, inW})
			return nil, err
		}
		s.r, s.w = outR, inW
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		childEnds = []*os.File{inR, outW}
	}
	cmd.SysProcAttr.Credential = a.cred.sysCred()
	err = cmd.Start()
	closeAll(childEnds)
	if err != nil {
		_ = s.Close()
		return nil, resolute.Errorf(resolute.EInvalid, "exec in %s: %v", allocationID, err)
	}
	s.pgid = cmd.Process.Pid
	a.sessions[s] = struct{}{}
	go func() {
		err := cmd.Wait()
		s.code = -1
		if cmd.ProcessState == nil {
			s.err = err
		} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			s.code = ws.ExitStatus()
			if ws.Signaled() {
				s.code = 128 + int(ws.Signal())
			}
		}
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			s.err = err
		}
		close(s.done)
		a.mu.Lock()
		delete(a.sessions, s)
		a.mu.Unlock()
	}()
	return s, nil
}
