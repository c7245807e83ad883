package views

import (
	"testing"

	"github.com/resolute-ml/resolute"
)

func TestTaskStatusSaysWhatATaskDoesNow(t *testing.T) {
	tests := map[string]struct {
		row  TaskRow
		want string
	}{
		"a TensorBoard that ended says so, not that it opens once ready": {
			row: TaskRow{Task: resolute.Task{Type: resolute.TaskTensorBoard, State: resolute.TaskTerminated}}, want: "TensorBoard has ended; its log below says why."},
		"a TensorBoard starting opens once ready": {
			row: TaskRow{Task: resolute.Task{Type: resolute.TaskTensorBoard, State: resolute.TaskRunning}}, want: "It opens once TensorBoard is ready."},
		"a ready notebook can be opened": {
			row: TaskRow{Task: resolute.Task{Type: resolute.TaskNotebook, State: resolute.TaskRunning}, Open: "/proxy/x/"}, want: "Jupyter is ready: Open it."},
		"a queued shell opens once ready": {
			row: TaskRow{Task: resolute.Task{Type: resolute.TaskShell, State: resolute.TaskQueued}}, want: "It opens once the shell is ready."},
		"a command has nothing to open": {
			row: TaskRow{Task: resolute.Task{Type: resolute.TaskCommand, State: resolute.TaskRunning}}, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := TaskStatus(tc.row); got != tc.want {
				t.Errorf("TaskStatus = %q, want %q", got, tc.want)
			}
		})
	}
}
