package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Restart backoff: the first restart is tried at once, later ones after a
// wait that doubles from minBackoff up to maxBackoff while starts fail.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// earlierServerWait bounds how long a start waits for the server of an
// earlier run that is still shutting down.
const earlierServerWait = 60 * time.Second

// Run keeps the server running until ctx ends or Stop is called: when the
// postmaster exits on its own (killed, crashed), Run says so once in the
// log, starts it again (PostgreSQL recovers from its WAL), retrying with
// backoff while starts fail, and says once when it is back. Down tells
// meanwhile that it is down and why.
func (s *Server) Run(ctx context.Context) {
	for {
		s.mu.Lock()
		p := s.proc
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-p.done:
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		s.downSince, s.downWhy, s.failedStarts = time.Now(), fmt.Sprintf("it exited (%v)", p.err), 0
		s.mu.Unlock()
		s.logger.Warn("embedded database exited; restarting it", "err", p.err, "log", s.logTail(3))
		if !s.restart(ctx) {
			return
		}
	}
}

// restart starts the server again until it runs; false when ctx ended or
// Stop was called first.
func (s *Server) restart(ctx context.Context) bool {
	start := time.Now()
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		err := s.waitForEarlierServer(ctx, earlierServerWait)
		if err == nil {
			err = s.launch(ctx)
		}
		if err == nil {
			s.logger.Info("embedded database is back", "down_for", time.Since(start).Round(time.Millisecond))
			s.mu.Lock()
			s.downSince, s.downWhy, s.failedStarts = time.Time{}, "", 0
			s.mu.Unlock()
			return true
		}
		if errors.Is(err, errStopping) || ctx.Err() != nil {
			return false
		}
		s.mu.Lock()
		s.failedStarts++
		if s.failedStarts == 1 {
			// Once: the next tries fail alike, and Down counts them.
			s.logger.Warn("embedded database did not start again; retrying", "err", err)
		}
		s.mu.Unlock()
		wait = min(max(2*wait, minBackoff), maxBackoff)
	}
}

// Down says why the server is down ("" while it runs): it exited and Run
// is restarting it.
func (s *Server) Down() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downSince.IsZero() {
		return ""
	}
	msg := fmt.Sprintf("the embedded database is down for %s: %s; restarting it", time.Since(s.downSince).Round(time.Second), s.downWhy)
	if s.failedStarts > 0 {
		msg += fmt.Sprintf(" (%d tries failed so far, see the master's log)", s.failedStarts)
	}
	return msg
}

// waitForEarlierServer waits until no server of an earlier run holds the
// data directory, at most limit: its postmaster (after the master was
// killed, its server gets SIGINT and shuts down, which takes a
// checkpoint's time), or the backends of a postmaster that was killed,
// which still hold its shared memory until they see it gone.
func (s *Server) waitForEarlierServer(ctx context.Context, limit time.Duration) error {
	lockFile := filepath.Join(s.dataDir, "postmaster.pid")
	deadline := time.Now().Add(limit)
	waited := 0
	for {
		// The postgres user's file: read through readIn, never a link out
		// of its directory, nor a FIFO to hang on.
		lock, _ := s.readIn("data/postmaster.pid")
		pid, attached := lockHolder(lock), shmAttached(lock)
		if pid == 0 && attached == 0 {
			if waited != 0 {
				s.logger.Info("the embedded database of an earlier run stopped", "pid", waited)
			}
			return nil
		}
		if pid != 0 && waited == 0 {
			s.logger.Info("waiting for the embedded database of an earlier run to stop", "pid", pid, "lock_file", lockFile)
			waited = pid
		}
		if time.Now().After(deadline) {
			if pid == 0 {
				return fmt.Errorf("%d processes of an earlier PostgreSQL server still hold the shared memory named in %s after %s: "+
					"stop them (`ipcs -m -p`), and start again", attached, lockFile, limit)
			}
			return fmt.Errorf("a PostgreSQL server (pid %d, in %s) still holds the embedded database after %s: "+
				"is another master using this data_dir? Stop that server, or wait for it, and start again", pid, lockFile, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// shmAttached is how many processes attach the System V shared memory
// segment a postmaster.pid names (its seventh line: key and id), as
// /proc/sysvipc/shm tells: PostgreSQL refuses to start while any do.
func shmAttached(lock []byte) int {
	lines := strings.Split(string(lock), "\n")
	if len(lines) < 7 {
		return 0
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return 0
	}
	table, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		return 0 // nothing to ask: PostgreSQL will say
	}
	for _, row := range strings.Split(string(table), "\n")[1:] {
		// key shmid perms size cpid lpid nattch ...
		if cols := strings.Fields(row); len(cols) > 6 && cols[1] == f[1] {
			n, _ := strconv.Atoi(cols[6])
			return n
		}
	}
	return 0
}

// lockHolder is the pid of the live postmaster named by a postmaster.pid's
// content, or 0 when there is none: no file, or a pid that is gone, a
// zombie (its parent died and nobody reaped it) or not a postgres process
// (reused).
func lockHolder(lock []byte) int {
	first, _, _ := strings.Cut(string(lock), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return pid // no /proc to ask: trust kill's answer
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	open, closing := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
	if open < 0 || closing < open || closing+2 >= len(stat) {
		return pid
	}
	comm, state := string(stat[open+1:closing]), stat[closing+2]
	if state == 'Z' || state == 'X' || comm != "postgres" {
		return 0
	}
	return pid
}
