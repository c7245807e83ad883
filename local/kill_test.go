package local

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestKill(t *testing.T) {
	tests := map[string]struct {
		shell      string
		entrypoint []string
		grace      time.Duration
		wantSignal syscall.Signal
	}{
		"a process that ignores SIGTERM gets SIGKILL after the grace period": {
			shell: `trap '' TERM; echo ready; while :; do sleep 1; done`, grace: 100 * time.Millisecond,
			wantSignal: syscall.SIGKILL,
		},
		"a well-behaved process exits on SIGTERM without waiting for the grace period": {
			// Were SIGKILL needed, the test would wait for the whole hour.
			shell: `echo ready; exec sleep 60`, grace: time.Hour, wantSignal: syscall.SIGTERM,
		},
		"no grace period means SIGKILL at once": {
			shell: `echo ready; exec sleep 60`, wantSignal: syscall.SIGKILL,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			launch(t, m, spec(t, "k", tc.shell))
			logLine(t, m, "k", "ready") // the trap is set
			if err := m.Kill(context.Background(), "k", tc.grace); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			ex := exitOf(t, untilExit(t, m, "k"))
			if ex.Signal != tc.wantSignal || ex.ExitCode != 128+int(tc.wantSignal) || !ex.Killed {
				t.Errorf("Exited = %+v, want killed by %v", ex, tc.wantSignal)
			}
		})
	}
}

func TestKillReachesGrandchildren(t *testing.T) {
	m := newManager(t, nil)
	// The grandchild ignores SIGTERM; only the group's SIGKILL ends it.
	launch(t, m, spec(t, "g", `(trap '' TERM; echo trapped; exec sleep 60) & echo child=$!; wait`))
	// The two lines may come in either order.
	pid, trapped := 0, false
	next(t, m, "g", func(e Event) bool {
		if l, ok := e.(Log); ok {
			if v, ok := strings.CutPrefix(l.Line, "child="); ok {
				pid, _ = strconv.Atoi(v)
			}
			trapped = trapped || l.Line == "trapped"
		}
		return pid > 0 && trapped
	})
	if err := m.Kill(context.Background(), "g", 50*time.Millisecond); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	untilExit(t, m, "g")
	eventually(t, "grandchild killed", func() bool { return processGone(pid) })
}

func TestLeaderExitKillsTheRestOfTheGroup(t *testing.T) {
	m := newManager(t, nil)
	launch(t, m, spec(t, "g", `sleep 60 & echo child=$!`))
	var pid int
	for _, l := range logs(untilExit(t, m, "g"), Stdout) {
		pid, _ = strconv.Atoi(strings.TrimPrefix(l.Line, "child="))
	}
	eventually(t, "background child killed", func() bool { return processGone(pid) })
}

func TestKillOfEndedOrUnknownAllocations(t *testing.T) {
	m := newManager(t, nil)
	launch(t, m, spec(t, "done", "true"))
	untilExit(t, m, "done")
	if err := m.Kill(context.Background(), "done", time.Second); err != nil {
		t.Errorf("Kill of an ended allocation = %v, want nil", err)
	}
	if got := code(m.Kill(context.Background(), "nobody", time.Second)); got != "not_found" {
		t.Errorf("Kill of an unknown allocation: code %q, want not_found", got)
	}
}
