package control

import (
	"context"
	"time"
)

// ResourceManager is what control needs of a resource manager (local/ now,
// k8s/ later). The master's wiring adapts the real one and feeds its events
// back through Experiments.AllocationStarted, AllocationExited and Logs.
type ResourceManager interface {
	// FreeSlots returns the ids of the slots no allocation holds.
	FreeSlots() []int
	// TotalSlots is the number of slots the resource manager has.
	TotalSlots() int
	// Launch starts an allocation on the slots the spec names.
	Launch(ctx context.Context, spec LaunchSpec) error
	// Kill stops an allocation: SIGTERM, then SIGKILL after grace.
	Kill(ctx context.Context, allocationID string, grace time.Duration) error
}

// LaunchSpec is one allocation to start.
type LaunchSpec struct {
	AllocationID string
	TaskID       string
	Slots        []int
	WorkDir      string
	ContextTarGz []byte
	Env          map[string]string
	Shell        string   // run with sh -c, or
	Entrypoint   []string // run as is
	PythonPath   []string
}
