package control_test

import (
	"testing"
	"time"

	"github.com/resolute-ml/resolute/control"
)

func TestJupyterIdleFollowsTheNotebookIdleType(t *testing.T) {
	t0 := time.Unix(1000, 0)
	later := t0.Add(time.Minute)
	idleKernel := control.JupyterKernel{ExecutionState: "idle", LastActivity: t0}
	tests := map[string]struct {
		kind  string
		state control.JupyterState
		seen  time.Time
		idle  bool
	}{
		"nothing open is idle by default":                   {"kernels_or_terminals", control.JupyterState{}, t0, true},
		"an open kernel is not idle by default":             {"kernels_or_terminals", control.JupyterState{Kernels: []control.JupyterKernel{idleKernel}}, t0, false},
		"an open terminal is not idle by default":           {"kernels_or_terminals", control.JupyterState{Terminals: 1}, t0, false},
		"a kernel without connections is idle":              {"kernel_connections", control.JupyterState{Kernels: []control.JupyterKernel{idleKernel}}, t0, true},
		"a connected kernel is not idle":                    {"kernel_connections", control.JupyterState{Kernels: []control.JupyterKernel{{Connections: 1}}}, t0, false},
		"a busy kernel is activity":                         {"activity", control.JupyterState{Kernels: []control.JupyterKernel{{ExecutionState: "busy", LastActivity: t0}}}, t0, false},
		"a connected kernel still starting counts as busy":  {"activity", control.JupyterState{Kernels: []control.JupyterKernel{{ExecutionState: "starting", Connections: 1, LastActivity: t0}}}, t0, false},
		"a kernel nobody connected to is idle":              {"activity", control.JupyterState{Kernels: []control.JupyterKernel{{ExecutionState: "starting", LastActivity: t0}}}, t0, true},
		"an idle kernel with nothing new is idle":           {"activity", control.JupyterState{Kernels: []control.JupyterKernel{idleKernel}}, t0, true},
		"an idle kernel that ran something since is active": {"activity", control.JupyterState{Kernels: []control.JupyterKernel{{ExecutionState: "idle", LastActivity: later}}}, t0, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if idle, _ := control.JupyterIdle(tc.kind, tc.state, tc.seen); idle != tc.idle {
				t.Fatalf("idle = %v, want %v", idle, tc.idle)
			}
		})
	}
}
