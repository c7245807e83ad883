package local

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// finish kills an allocation's process group; a process of its task that
// left the group (setsid(), a double fork into a group of its own) is out
// of that kill's reach and would outlive the allocation, holding its GPUs
// and ports. A task of a user no administrator linked runs as its owner's
// default uid (task_uid_base + user id), which no person logs in as and
// only that owner's tasks use: once no allocation of the manager runs as
// it, every process that still does is a stray, and is killed. A linked
// uid may be a person's account, with their logins: only its allocations'
// groups are killed, and what a task of theirs detaches outlives it.

// maxSweepRounds bounds a sweep: each round kills the processes that the
// rounds before did not find, which a task that forks as fast as it is
// killed keeps making.
const maxSweepRounds = 100

// sweepAfter kills the strays of a, which is ending, when it ran as a
// default uid that no other allocation runs as.
func (m *Manager) sweepAfter(a *allocation) {
	if a.cred != nil && a.cred.DefaultIDs {
		m.sweep(a.cred.UID, a)
	}
}

// sweep kills every process of uid, a default uid, unless an allocation of
// the manager that has not ended, other than ending, runs as it. A launch
// takes its uid under sweepMu too (prepare), and Recover adopts under it,
// so a sweep never kills the processes of an allocation that starts, or is
// adopted, meanwhile.
func (m *Manager) sweep(uid int, ending *allocation) {
	m.sweepMu.Lock()
	defer m.sweepMu.Unlock()
	m.mu.Lock()
	if ending != nil {
		ending.ending = true
	}
	busy := m.runsAs(uid)
	m.mu.Unlock()
	if busy {
		return
	}
	left, err := killUID(uid)
	switch {
	case err != nil:
		m.log.Warn("cannot kill the processes ended tasks left", "uid", uid, "error", err)
	case left > 0:
		m.log.Warn("processes of an ended task's uid were still forking after every round of SIGKILL; some may be left",
			"uid", uid, "rounds", maxSweepRounds, "found in the last round", left)
	}
}

// runsAs reports whether an allocation that has not ended, nor is ending,
// runs as uid. The caller holds m.mu.
func (m *Manager) runsAs(uid int) bool {
	for _, a := range m.allocs {
		if !a.ended && !a.ending && a.cred != nil && a.cred.UID == uid {
			return true
		}
	}
	return false
}

// procID names a process across PID reuse.
type procID struct {
	pid   int
	ticks uint64 // its start time, /proc/<pid>/stat field 22
}

// killUID sends SIGKILL to every process whose real, effective or saved uid
// is uid, round after round until a round finds none that an earlier one
// signalled not: a process with SIGKILL pending forks no more, so what is
// left then is dying. After maxSweepRounds rounds it gives up and returns
// how many processes the last round found. Root's uid and the master's own
// are refused, whatever the caller says.
func killUID(uid int) (left int, err error) {
	if uid <= 0 || uid == os.Getuid() || uid == os.Geteuid() {
		return 0, fmt.Errorf("uid %d is root's or the master's own: its processes are never swept", uid)
	}
	signalled := make(map[procID]bool)
	for range maxSweepRounds {
		left, err = killNew(uid, signalled)
		if err != nil || left == 0 {
			return 0, err
		}
	}
	return left, nil
}

// killNew makes one round of killUID: it kills the processes of uid that
// signalled does not hold, adds them to it and returns how many there were.
func killNew(uid int, signalled map[procID]bool) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		killed, err := killIfNew(pid, uid, signalled)
		if err != nil {
			return n, err
		}
		if killed {
			n++
		}
	}
	return n, nil
}

// killIfNew kills process pid if it is a live process of uid that
// signalled does not hold, and adds it there.
func killIfNew(pid, uid int, signalled map[procID]bool) (bool, error) {
	// The descriptor holds on to the process: what is read of pid below is
	// either its, or the signal finds it gone, never a process that took
	// its PID since.
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer unix.Close(fd)
	st, err := readProcStat(pid)
	p := procID{pid, st.startTicks}
	if err != nil || st.state == 'Z' || st.state == 'X' || signalled[p] || !hasUID(pid, uid) {
		return false, nil // gone, ended (a zombie holds nothing but its status), dying, or not uid's
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); errors.Is(err, unix.ESRCH) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("kill process %d of uid %d: %w", pid, uid, err)
	}
	signalled[p] = true
	return true, nil
}

// hasUID reports whether process pid's real, effective or saved uid is
// uid: the first three of the Uid line of /proc/<pid>/status.
func hasUID(pid, uid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if ids, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(ids)
			return slices.Contains(f[:min(3, len(f))], strconv.Itoa(uid))
		}
	}
	return false
}
