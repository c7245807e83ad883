package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/resolute-ml/resolute"
)

const stateFileName = "state.json"

// state is what an allocation's state file holds: enough to find its
// processes again, and to exec into it, after a restart.
type state struct {
	AllocationID string    `json:"allocationId"`
	TaskID       string    `json:"taskId"`
	PID          int       `json:"pid"`
	PGID         int       `json:"pgid"`
	StartTicks   uint64    `json:"startTicks"` // /proc/<pid>/stat field 22
	StartedAt    time.Time `json:"startedAt"`
	Slots        []int     `json:"slots"`
	WorkDir      string    `json:"workDir"`
	Env          []string  `json:"env"` // holds the task's tokens: the file is 0600
	// Cred is what its processes run as, and its terminals must; absent
	// when it runs as the master's user.
	Cred *taskCred `json:"cred,omitempty"`
}

func writeState(a *allocation) error {
	b, err := json.Marshal(state{
		AllocationID: a.id, TaskID: a.taskID, PID: a.pid, PGID: a.pgid, StartTicks: a.startTicks,
		StartedAt: a.startedAt, Slots: a.slots, WorkDir: a.workDir, Env: a.env, Cred: a.cred,
	})
	if err != nil {
		return err
	}
	tmp := filepath.Join(a.dir, stateFileName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(a.dir, stateFileName))
}

type procStat struct {
	state      byte
	startTicks uint64
}

// readProcStat reads a process's state and start time (in clock ticks since
// boot) from /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold anything, ')' too.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state); start time is field 22
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	ticks, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: f[0][0], startTicks: ticks}, nil
}

// alive reports whether pid is still the process that started at ticks.
func alive(pid int, ticks uint64) bool {
	st, err := readProcStat(pid)
	if err != nil || st.startTicks != ticks {
		return false
	}
	// A zombie has ended; reaping it is its parent's job (never ours: the
	// parent may be a Manager of this very process, waiting on it).
	return st.state != 'Z' && st.state != 'X'
}

// Recover adopts the allocations of the state directory whose leader
// process is still alive, removes the state of those that ended, and returns
// the adopted ones plus those this manager already runs (Running), and those
// that ended while no master ran with the exit status their leader recorded.
// Adopted allocations hold their slots again, can be killed and exec'd into,
// and get an Exited event (with ErrExitUnknown) when they end; no Started
// event is sent for them.
func (m *Manager) Recover(ctx context.Context) ([]resolute.RecoveredAllocation, error) {
	entries, err := os.ReadDir(m.opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	out, ended, err := m.recoverEach(ctx, entries)
	if err != nil {
		return out, err
	}
	m.sweepWorkRoot()
	// Their strays, now that the allocations that still run are known.
	slices.Sort(ended)
	for _, uid := range slices.Compact(ended) {
		m.sweep(uid, nil)
	}
	return out, nil
}

// recoverEach adopts or removes the allocation of each entry of the state
// directory, as Recover says, and also returns the default uids of those
// that ended. It holds sweepMu: a sweep waits until the allocations that
// still run are adopted, and spares their processes.
func (m *Manager) recoverEach(ctx context.Context, entries []os.DirEntry) ([]resolute.RecoveredAllocation, []int, error) {
	m.sweepMu.Lock()
	defer m.sweepMu.Unlock()
	var out []resolute.RecoveredAllocation
	var ended []int
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if !e.IsDir() || !allocationIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(m.opts.StateDir, e.Name())
		if running, known := m.known(e.Name()); known {
			if running {
				out = append(out, resolute.RecoveredAllocation{AllocationID: e.Name(), Running: true})
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, stateFileName))
		if os.IsNotExist(err) {
			_ = os.RemoveAll(dir) // a launch that never started
			continue
		}
		var st state
		if err == nil {
			err = json.Unmarshal(b, &st)
		}
		if err != nil || st.AllocationID != e.Name() {
			m.log.Warn("skipping unreadable allocation state", "dir", dir, "error", err)
			continue
		}
		if !alive(st.PID, st.StartTicks) {
			if code, ok := readExit(dir); ok {
				out = append(out, resolute.RecoveredAllocation{AllocationID: st.AllocationID, ExitCode: code})
			}
			if st.Cred != nil && st.Cred.DefaultIDs {
				ended = append(ended, st.Cred.UID)
			}
			_ = os.RemoveAll(dir)
			m.removeWorkDir(st.WorkDir)
			continue
		}
		if _, err := m.adopt(st, dir); err != nil {
			return out, nil, err
		}
		out = append(out, resolute.RecoveredAllocation{AllocationID: st.AllocationID, Running: true})
	}
	return out, ended, nil
}

// sweepWorkRoot removes the work directories of WorkRoot that belong to no
// allocation the manager has: those of allocations that ended while no
// master ran and left no state, or whose launch a crash cut short.
func (m *Manager) sweepWorkRoot() {
	if m.opts.WorkRoot == "" || m.opts.KeepWorkDirs {
		return
	}
	entries, err := os.ReadDir(m.opts.WorkRoot)
	if err != nil {
		if !os.IsNotExist(err) {
			m.log.Warn("cannot list the work directories", "dir", m.opts.WorkRoot, "error", err)
		}
		return
	}
	for _, e := range entries {
		// Listed after it was made, a launching allocation is known by then.
		if _, known := m.known(e.Name()); known || !allocationIDPattern.MatchString(e.Name()) {
			continue
		}
		m.removeWorkDir(filepath.Join(m.opts.WorkRoot, e.Name()))
	}
}

// known reports whether the manager has id already, and whether it has
// started and not ended.
func (m *Manager) known(id string) (running, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.allocs[id]
	return ok && !a.ended && a.pid != 0, ok
}

// adopt registers a surviving allocation and starts tailing its output
// (from the current end) and watching for its exit.
func (m *Manager) adopt(st state, dir string) (*allocation, error) {
	a := &allocation{
		id: st.AllocationID, taskID: st.TaskID, dir: dir, workDir: st.WorkDir, env: st.Env, cred: st.Cred,
		adopted: true, exited: make(chan struct{}), sessions: make(map[*Stream]struct{}),
		pid: st.PID, pgid: st.PGID, startTicks: st.StartTicks, startedAt: st.StartedAt,
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, resolute.Errorf(resolute.EUnavailable, "local: the resource manager is closed")
	}
	for _, id := range st.Slots {
		if id < 0 || id >= len(m.slots) || m.slots[id].AllocationID != "" {
			m.log.Warn("adopted allocation's slot is gone or taken", "allocation", a.id, "slot", id)
			continue
		}
		m.slots[id].AllocationID = a.id
		a.slots = append(a.slots, id)
	}
	m.allocs[a.id] = a
	m.mu.Unlock()
	var sizes [2]int64
	for i, name := range []string{Stdout, Stderr} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			sizes[i] = fi.Size()
		}
	}
	m.startTailers(a, sizes[0], sizes[1])
	m.goReader(func() { m.watch(a) })
	return a, nil
}

// watch polls an adopted allocation's leader until it is gone.
func (m *Manager) watch(a *allocation) {
	t := time.NewTicker(m.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			if !alive(a.pid, a.startTicks) {
				if code, ok := readExit(a.dir); ok {
					m.finish(a, Exited{AllocationID: a.id, ExitCode: code})
				} else {
					m.finish(a, Exited{AllocationID: a.id, ExitCode: -1, Err: ErrExitUnknown})
				}
				return
			}
		}
	}
}
