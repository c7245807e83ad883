package k8s

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/resolute-ml/resolute"
)

// TestBuildPodsRunTheStartupHookFirst: a task that runs its context's
// startup-hook.sh has its container's command wrapped so that the hook runs
// first, in the work directory, before even the rendezvous of a gang's
// pods (as in Determined); one that does not keeps its command.
func TestBuildPodsRunTheStartupHookFirst(t *testing.T) {
	rendezvous := []string{"sh", "-c", rendezvousScript, "rendezvous", "python3", "-m", "determined.exec.harness"}
	tests := map[string]struct {
		req         func() PodRequest
		startupHook bool
		want        []string
	}{
		"each pod of a two-pod trial runs the hook, then meets the others": {
			req: trialRequest, startupHook: true, want: resolute.WithStartupHook(rendezvous),
		},
		"a one-pod task's shell command runs after the hook": {
			req: func() PodRequest {
				r := trialRequest()
				r.Spec.Entrypoint, r.Spec.Shell = nil, "echo $FROM_HOOK"
				r.TaskType, r.Slots, r.Nodes, r.PodSlots = resolute.TaskNotebook, 0, []string{""}, [][]int{nil}
				return r
			},
			startupHook: true, want: resolute.WithStartupHook([]string{"sh", "-c", "echo $FROM_HOOK"}),
		},
		"a task that runs no hook (a command) keeps its command, though its context has one": {
			req: trialRequest, startupHook: false, want: rendezvous,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := tc.req()
			r.Spec.StartupHook = tc.startupHook
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				c := container(p, TaskContainerName)
				if diff := cmp.Diff(tc.want, c.Command); diff != "" {
					t.Errorf("pod %s command (-want +got):\n%s", p.Name, diff)
				}
				if c.WorkingDir != WorkDir || len(c.Args) > 0 {
					t.Errorf("pod %s runs in %q with args %q, want %s and none", p.Name, c.WorkingDir, c.Args, WorkDir)
				}
				if i := slices.IndexFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == InitContainerName }); i < 0 {
					t.Errorf("pod %s has no %s to unpack the context (and its hook)", p.Name, InitContainerName)
				}
			}
		})
	}
}
