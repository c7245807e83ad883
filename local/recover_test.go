package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

func TestRecoverAdoptsRunningAllocations(t *testing.T) {
	stateDir := filepath.Join(reachableDir(t), "state")
	opts := func(o *Options) { o.StateDir = stateDir }
	m1 := newManager(t, opts)
	s := spec(t, "survivor", `echo before; while [ ! -e go ]; do sleep 0.02; done; echo after; exec sleep 60`)
	s.Slots = []int{1}
	launch(t, m1, s)
	started := next(t, m1, "survivor", func(e Event) bool { _, ok := e.(Started); return ok }).(Started)
	logLine(t, m1, "survivor", "before")
	m1.Close() // the master stops; the task does not

	m2 := newManager(t, opts)
	got, err := m2.Recover(context.Background())
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	want := []resolute.RecoveredAllocation{{AllocationID: "survivor", Running: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Recover (-want +got):\n%s", diff)
	}
	if holder := m2.Capacity().Slots[1].AllocationID; holder != "survivor" {
		t.Errorf("slot 1 held by %q, want survivor", holder)
	}
	if info := m2.Capacity().Allocations; len(info) != 1 || info[0].PID != started.PID || !info[0].Adopted {
		t.Errorf("allocations after Recover = %+v, want survivor adopted with pid %d", info, started.PID)
	}
	// Output written after the restart is captured again.
	if err := os.WriteFile(filepath.Join(s.WorkDir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	logLine(t, m2, "survivor", "after")
	// It can be exec'd into with its environment.
	p, err := m2.Exec(context.Background(), "survivor", []string{"sh", "-c", "echo $DET_SLOT_IDS"}, false)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	newReader(p).until(t, "[1]\n")

	// SIGKILL at once: its leader records no status, so none is known.
	// (With SIGTERM it records 143, which m2 reports, unless m1, whose
	// wait still reaps the leader in this process, removed the state
	// first: a race of the test's own.)
	if err := m2.Kill(context.Background(), "survivor", 0); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	ex := exitOf(t, untilExit(t, m2, "survivor"))
	if !errors.Is(ex.Err, ErrExitUnknown) || ex.ExitCode != -1 || !ex.Killed {
		t.Errorf("Exited = %+v, want killed with an unknown exit code", ex)
	}
	if holder := m2.Capacity().Slots[1].AllocationID; holder != "" {
		t.Errorf("slot 1 held by %q after exit, want free", holder)
	}
	again, err := m2.Recover(context.Background())
	if err != nil || len(again) != 0 {
		t.Errorf("second Recover = %v, %v; want nothing", again, err)
	}
}

func TestRecoverIgnoresEndedAndReusedProcesses(t *testing.T) {
	stateDir := filepath.Join(reachableDir(t), "state")
	me, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]state{
		"a PID now used by another process is not adopted": {PID: os.Getpid(), PGID: os.Getpid(), StartTicks: me.startTicks + 1},
		"a process that is gone is not adopted":            {PID: 1 << 30, PGID: 1 << 30},
	}
	i := 0
	for name, st := range tests {
		t.Run(name, func(t *testing.T) {
			i++
			st.AllocationID = "gone" + string(rune('a'+i))
			dir := filepath.Join(stateDir, st.AllocationID)
			a := &allocation{id: st.AllocationID, dir: dir, pid: st.PID, pgid: st.PGID, startTicks: st.StartTicks}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := writeState(a); err != nil {
				t.Fatal(err)
			}
			m := newManager(t, func(o *Options) { o.StateDir = stateDir })
			got, err := m.Recover(context.Background())
			if err != nil || len(got) != 0 {
				t.Errorf("Recover = %v, %v; want nothing", got, err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("state of %s: %v, want removed", name, err)
			}
		})
	}
}

func TestRecoverReportsTheStatusOfAnAllocationThatEndedWhileNoMasterRan(t *testing.T) {
	stateDir := filepath.Join(reachableDir(t), "state")
	dir := filepath.Join(stateDir, "done")
	a := &allocation{id: "done", dir: dir, pid: 1 << 30, pgid: 1 << 30}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeState(a); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, exitFileName), []byte("5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, func(o *Options) { o.StateDir = stateDir })
	got, err := m.Recover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]resolute.RecoveredAllocation{{AllocationID: "done", ExitCode: 5}}, got); diff != "" {
		t.Errorf("Recover (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state of the ended allocation: %v, want removed", err)
	}
}

func TestReadProcStatOfSelf(t *testing.T) {
	st, err := readProcStat(os.Getpid())
	if err != nil || st.startTicks == 0 || st.state == 0 {
		t.Fatalf("readProcStat = %+v, %v", st, err)
	}
	if !alive(os.Getpid(), st.startTicks) || alive(os.Getpid(), st.startTicks+1) {
		t.Errorf("alive must hold for the recorded start time only")
	}
}
