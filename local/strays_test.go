package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

// detachers start $detach, a script, as a process that leaves the task's
// process group, out of reach of the group's SIGKILL.
var detachers = map[string]string{
	"setsid":                                `setsid sh -c "$detach" &`,
	"a double fork into a group of its own": `(perl -e 'setpgrp(0, 0); exec @ARGV' sh -c "$detach" &)`,
}

// detaching is a task's shell that detaches a process (how, one of
// detachers), prints "detached=<its pid> <its group>" once it has left the
// task's group, and goes on with then.
func detaching(t *testing.T, how, then string) string {
	t.Helper()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("needs perl (Debian's perl-base) to put a process in a group of its own")
	}
	return "detach='echo $$ > detached.tmp && mv detached.tmp detached; exec sleep 600'\n" + how + "\n" +
		"while [ ! -e detached ]; do sleep 0.01; done; echo detached=$(cat detached) $(cut -d' ' -f5 /proc/$(cat detached)/stat)\n" + then
}

// detachedPID waits for the line of detaching of allocation id and returns
// the detached process's pid, checking it leads a group of its own.
func detachedPID(t *testing.T, m *Manager, id string) int {
	t.Helper()
	l := next(t, m, id, func(e Event) bool { l, ok := e.(Log); return ok && strings.HasPrefix(l.Line, "detached=") }).(Log)
	var pid, pgid int
	if _, err := fmt.Sscanf(l.Line, "detached=%d %d", &pid, &pgid); err != nil || pid != pgid {
		t.Fatalf("%s printed %q (%v), want a process in a group of its own", id, l.Line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// processesOf lists the live processes whose real, effective or saved uid
// is uid, as ps would.
func processesOf(uid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if _, notPID := strconv.Atoi(e.Name()); notPID != nil || err != nil {
			continue
		}
		var name, state string
		var uids []string
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "Name":
				name = strings.TrimSpace(v)
			case "State":
				state = strings.TrimSpace(v)
			case "Uid":
				uids = strings.Fields(v)
			}
		}
		if len(uids) >= 3 && slices.Contains(uids[:3], strconv.Itoa(uid)) && !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X") {
			out = append(out, e.Name()+" "+name)
		}
	}
	return out
}

// noneLeft waits until no process of uid is left.
func noneLeft(t *testing.T, uid int) {
	t.Helper()
	eventually(t, fmt.Sprintf("no process of uid %d left", uid), func() bool { return len(processesOf(uid)) == 0 })
}

func TestWhatAnEndedTaskOfADefaultUIDDetachedIsKilled(t *testing.T) {
	needRoot(t)
	for name, how := range detachers {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			launch(t, m, spec(t, "d", detaching(t, how, "exit 0")))
			pid := detachedPID(t, m, "d")
			untilExit(t, m, "d")
			noneLeft(t, userOf(t).UID)
			if !processGone(pid) {
				t.Errorf("the detached process %d outlived its allocation", pid)
			}
		})
	}
}

func TestADefaultUIDsProcessesLiveUntilItsLastAllocationEnds(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	first, second := spec(t, "first", detaching(t, detachers["setsid"], "while [ ! -e go ]; do sleep 0.02; done")),
		spec(t, "second", detaching(t, detachers["setsid"], "while [ ! -e go ]; do sleep 0.02; done"))
	launch(t, m, first)
	firstDetached := detachedPID(t, m, "first")
	launch(t, m, second)
	secondDetached := detachedPID(t, m, "second")
	secondLeader := m.Capacity().Allocations[1].PID

	if err := os.WriteFile(filepath.Join(first.WorkDir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	untilExit(t, m, "first") // its strays are swept, or spared, by then
	for what, pid := range map[string]int{"the second allocation's leader": secondLeader,
		"what the second detached": secondDetached, "what the first detached": firstDetached} {
		if processGone(pid) {
			t.Errorf("%s (%d) was killed while the second allocation, of the same uid, runs", what, pid)
		}
	}

	if err := os.WriteFile(filepath.Join(second.WorkDir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	untilExit(t, m, "second")
	noneLeft(t, userOf(t).UID)
}

func TestWhatAnEndedTaskOfALinkedUIDDetachedIsLeft(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	s := spec(t, "linked", detaching(t, detachers["setsid"], "exit 0"))
	s.RunAs.Linked = true // of no account, as a link may be; it could be a person's
	launch(t, m, s)
	pid := detachedPID(t, m, "linked")
	untilExit(t, m, "linked") // swept by then, were it swept
	if processGone(pid) {
		t.Errorf("the process %d a linked user's task detached was killed", pid)
	}
}

func TestAForkingStrayIsKilledToo(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	// A fork bomb that RLIMIT_NPROC keeps to 64 processes (bash's ulimit
	// -u, dash's -p; with no limit, no bomb): each forks every millisecond,
	// failing or not.
	s := spec(t, "bomb", `setsid sh -c '{ ulimit -u 64 2>/dev/null || ulimit -p 64; } && `+
		`exec perl -e "while (1) { fork; select(undef, undef, undef, 0.001) }"' >/dev/null 2>&1 & `+
		`while [ ! -e go ]; do sleep 0.01; done`)
	launch(t, m, s)
	eventually(t, "the bomb forks", func() bool { return len(processesOf(userOf(t).UID)) >= 32 })
	if err := os.WriteFile(filepath.Join(s.WorkDir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	untilExit(t, m, "bomb")
	noneLeft(t, userOf(t).UID)
}

// straggler starts a process as u outside any allocation, as one a task of
// u's left, and returns it with a channel closed once it has exited.
func straggler(t *testing.T, u resolute.TaskUser) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true,
		Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: []uint32{}}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd, exited
}

// endedWhileNoMasterRan writes the state of an allocation of u whose
// leader is gone.
func endedWhileNoMasterRan(t *testing.T, stateDir, id string, u resolute.TaskUser) {
	t.Helper()
	a := &allocation{id: id, dir: filepath.Join(stateDir, id), pid: 1 << 30, pgid: 1 << 30,
		cred: &taskCred{UID: u.UID, GID: u.GID, User: u.User, DefaultIDs: !u.Linked}}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeState(a); err != nil {
		t.Fatal(err)
	}
}

func TestARestartKillsWhatEndedTasksOfDefaultUIDsLeft(t *testing.T) {
	needRoot(t)
	stateDir := filepath.Join(reachableDir(t), "state")
	opts := func(o *Options) { o.StateDir = stateDir }
	m1 := newManager(t, opts)
	launch(t, m1, spec(t, "runs.2", "exec sleep 600"))
	leader := next(t, m1, "runs.2", func(e Event) bool { _, ok := e.(Started); return ok }).(Started).PID
	m1.Close() // the master stops; the task does not

	// Three uids each had an allocation that ended while no master ran,
	// and left a process: a default uid that no allocation runs as now,
	// the one the allocation above runs as, and a linked one.
	gone, runs, linked := testUser(t, "gone"), userOf(t), testUser(t, "linked")
	linked.Linked = true
	stray := map[string]*exec.Cmd{}
	var goneExited chan struct{}
	for id, u := range map[string]resolute.TaskUser{"gone": gone, "runs": runs, "linked": linked} {
		endedWhileNoMasterRan(t, stateDir, id+".1", u)
		cmd, exited := straggler(t, u)
		stray[id] = cmd
		if id == "gone" {
			goneExited = exited
		}
	}

	m2 := newManager(t, opts)
	got, err := m2.Recover(context.Background())
	if err != nil || len(got) != 1 || got[0].AllocationID != "runs.2" || !got[0].Running {
		t.Fatalf("Recover = %+v, %v; want runs.2 adopted", got, err)
	}
	select { // SIGKILL is sent once Recover returns
	case <-goneExited:
	case <-time.After(patience):
		t.Fatal("the process of the default uid outlived the restart")
	}
	if ws := stray["gone"].ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Errorf("the default uid's stray ended with %v, want killed", ws)
	}
	for what, pid := range map[string]int{"the adopted allocation": leader, "a process of its uid": stray["runs"].Process.Pid,
		"a process of a linked uid": stray["linked"].Process.Pid} {
		if processGone(pid) {
			t.Errorf("%s (%d) was killed at the restart", what, pid)
		}
	}
}

func TestRootAndTheMastersOwnUIDAreNeverSwept(t *testing.T) {
	for _, uid := range []int{0, os.Getuid(), os.Geteuid()} {
		if n, err := killUID(uid); err == nil || n != 0 {
			t.Errorf("killUID(%d) = %d, %v; want refused", uid, n, err)
		}
	}
}
