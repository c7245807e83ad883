package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestAnEndedAllocationsWorkDirIsRemovedUnlessKept(t *testing.T) {
	for name, keep := range map[string]bool{"removed by default": false, "kept with KeepWorkDirs": true} {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, func(o *Options) { o.KeepWorkDirs = keep })
			s := spec(t, "ends", "echo made > made.txt; test -e train.py && echo done")
			s.Context = contextOf(tarGz(t, entry{name: "train.py", body: "print(1)"}))
			launch(t, m, s)
			events := untilExit(t, m, "ends")
			// Its output came as events before it ended: nothing is lost.
			if got := logs(events, Stdout); len(got) != 1 || got[0].Line != "done" {
				t.Errorf("output = %+v, want done (the context unpacked)", got)
			}
			if exists(s.WorkDir) != keep {
				t.Errorf("work dir exists: %v, want %v", exists(s.WorkDir), keep)
			}
		})
	}
}

func TestAFailedLaunchLeavesNoWorkDir(t *testing.T) {
	m := newManager(t, nil)
	s := spec(t, "bad", "true")
	s.Context = contextOf([]byte("not an archive"))
	if err := m.Launch(context.Background(), s); code(err) != "invalid" {
		t.Fatalf("Launch: %v, want invalid", err)
	}
	if exists(s.WorkDir) {
		t.Error("the failed launch left its work dir")
	}
}

// TestARestartedManagerRemovesTheWorkDirsOfWhatEndedWhileItWasDown stops a
// manager while one task runs and another waits to end, lets the second end
// with no manager running, and starts a new manager on the same
// directories: Recover removes the ended one's work dir and strays nobody
// owns, and keeps the running one's.
func TestARestartedManagerRemovesTheWorkDirsOfWhatEndedWhileItWasDown(t *testing.T) {
	for name, keep := range map[string]bool{"removed by default": false, "kept with KeepWorkDirs": true} {
		t.Run(name, func(t *testing.T) {
			base := reachableDir(t)
			workRoot := filepath.Join(base, "work")
			opts := func(o *Options) {
				o.StateDir, o.WorkRoot, o.KeepWorkDirs = filepath.Join(base, "state"), workRoot, keep
			}
			m1 := newManager(t, opts)
			runs := AllocationSpec{AllocationID: "runs.1", TaskID: "runs", WorkDir: filepath.Join(workRoot, "runs.1"), Shell: "exec sleep 60", RunAs: userOf(t)}
			ends := AllocationSpec{AllocationID: "ends.1", TaskID: "ends", WorkDir: filepath.Join(workRoot, "ends.1"),
				Shell: "while [ ! -e go ]; do sleep 0.02; done", RunAs: userOf(t)}
			launch(t, m1, runs)
			launch(t, m1, ends)
			started := next(t, m1, "ends.1", func(e Event) bool { _, ok := e.(Started); return ok }).(Started)
			stray := filepath.Join(workRoot, "stray.1") // a launch a crash cut short: no state
			if err := os.MkdirAll(stray, 0o700); err != nil {
				t.Fatal(err)
			}
			m1.Close() // the master stops; its tasks do not

			if err := os.WriteFile(filepath.Join(ends.WorkDir, "go"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the task ends while no manager runs", func() bool { return processGone(started.PID) })

			m2 := newManager(t, opts)
			if _, err := m2.Recover(context.Background()); err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if !exists(runs.WorkDir) {
				t.Error("the running allocation's work dir was removed")
			}
			for _, dir := range []string{ends.WorkDir, stray} {
				if exists(dir) != keep {
					t.Errorf("%s exists: %v, want %v", filepath.Base(dir), exists(dir), keep)
				}
			}
		})
	}
}
