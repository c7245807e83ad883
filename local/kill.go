package local

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// Kill sends SIGTERM to the allocation's process group and, if the leader
// has not exited after grace, SIGKILL (grace <= 0 means SIGKILL at once).
// It returns once SIGTERM is sent; the SIGKILL follows in the background and
// the Exited event reports the end. Killing an allocation that has exited is
// a no-op; an unknown allocation is not_found.
func (m *Manager) Kill(ctx context.Context, allocationID string, grace time.Duration) error {
	a, err := m.lookup(allocationID)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock() // waits for a Launch in progress
	if a.gone || a.pgid == 0 {
		a.mu.Unlock()
		return nil
	}
	a.killed = true
	pgid := a.pgid
	a.mu.Unlock()
	if grace <= 0 {
		return signalGroup(pgid, syscall.SIGKILL)
	}
	if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
		return err
	}
	go func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-a.exited:
		case <-t.C:
			_ = signalGroup(pgid, syscall.SIGKILL)
		}
	}()
	return nil
}

// signalGroup signals every process of a group; a group that is gone
// already is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return nil // never signal "all processes" or init's group by mistake
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
