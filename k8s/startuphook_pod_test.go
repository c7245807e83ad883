package k8s_test

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
)

// TestAPodRunsItsContextsStartupHookBeforeTheTask runs pods (as processes)
// whose context has a startup-hook.sh: what the hook exports and writes
// reaches the task, both print to the pod's log; a hook that exits 3 ends
// the pod with 3 and says so, and the task's command never runs.
func TestAPodRunsItsContextsStartupHookBeforeTheTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{run: true})

	ok := e.spec("trial-1.1", `echo "task sees $FROM_HOOK"; cat made-by-hook.txt`, nil)
	ok.StartupHook = true
	ok.Files["startup-hook.sh"] = []byte("echo \"hook runs with $GREETING\"\nexport FROM_HOOK='exported by the hook'\necho 'written by the hook' > made-by-hook.txt\n")
	launch(t, e.m, ok)
	e.events.line(t, ok.AllocationID, "hook runs with hello from the pod")
	e.events.line(t, ok.AllocationID, "task sees exported by the hook")
	e.events.line(t, ok.AllocationID, "written by the hook")
	if exit := e.events.exited(t, ok.AllocationID); exit.ExitCode != 0 {
		t.Errorf("exit = %+v, want 0", exit)
	}

	bad := e.spec("trial-2.1", `echo "the task ran"`, nil)
	bad.StartupHook = true
	bad.Files["startup-hook.sh"] = []byte("echo installing\nexit 3\n")
	launch(t, e.m, bad)
	e.events.line(t, bad.AllocationID, "startup-hook.sh exited with status 3; the task's entrypoint did not run")
	if exit := e.events.exited(t, bad.AllocationID); exit.ExitCode != 3 || exit.Killed || exit.Requeue {
		t.Errorf("exit = %+v, want status 3", exit)
	}
	for _, ev := range e.events.all {
		if l, isLog := ev.(resolute.AllocationLog); isLog && l.AllocationID == bad.AllocationID && strings.Contains(l.Line, "the task ran") {
			t.Errorf("the task's command ran after its hook failed: %q", l.Line)
		}
	}
}
