package control

import (
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

// TestTheMastersIdleTimeoutsApplyWhereATaskSetsNone: master.yaml's
// notebook_timeout and tensorboard_timeout (RunOptions) are the idle
// timeouts of notebooks and TensorBoards without idle_timeout; a task's own
// idle_timeout wins, and a shell without one never idles out.
func TestTheMastersIdleTimeoutsApplyWhereATaskSetsNone(t *testing.T) {
	x := &Tasks{c: &core{opts: RunOptions{NotebookTimeout: 30 * time.Minute, TensorboardTimeout: 5 * time.Minute}}}
	for name, tc := range map[string]struct {
		task resolute.Task
		want time.Duration
	}{
		"a notebook gets notebook_timeout":       {resolute.Task{Type: resolute.TaskNotebook, Config: []byte("{}")}, 30 * time.Minute},
		"a TensorBoard gets tensorboard_timeout": {resolute.Task{Type: resolute.TaskTensorBoard, Config: []byte("{}")}, 5 * time.Minute},
		"its own idle_timeout wins":              {resolute.Task{Type: resolute.TaskNotebook, Config: []byte("idle_timeout: 2m")}, 2 * time.Minute},
		"a shell stays":                          {resolute.Task{Type: resolute.TaskShell, Config: []byte("{}")}, 0},
	} {
		if got, _ := x.idleTimeout(tc.task); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
