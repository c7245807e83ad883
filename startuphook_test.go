package resolute

import "testing"

func TestRunsStartupHook(t *testing.T) {
	tests := map[string]struct {
		taskType string
		want     bool
	}{
		"a trial runs its model definition's hook":              {"TRIAL", true},
		"a notebook runs its context's hook":                    {TaskNotebook, true},
		"a shell runs its context's hook":                       {TaskShell, true},
		"a TensorBoard runs its context's hook":                 {TaskTensorBoard, true},
		"a command does not, as det cmd does not in Determined": {TaskCommand, false},
		"checkpoint GC, which has no context, does not":         {TaskCheckpointGC, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RunsStartupHook(tc.taskType); got != tc.want {
				t.Errorf("RunsStartupHook(%q) = %v, want %v", tc.taskType, got, tc.want)
			}
		})
	}
}
