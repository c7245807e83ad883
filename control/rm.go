package control

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/scheduler"
)

// ResourceManager is what control needs of a resource manager (local/ or
// k8s/); Experiments.Pump turns its events into state changes.
type ResourceManager interface {
	// TotalSlots is the number of slots the resource manager has.
	TotalSlots() int
	// Launch starts an allocation on the slots the spec names.
	Launch(ctx context.Context, spec resolute.LaunchSpec) error
	// Kill stops an allocation: SIGTERM, then SIGKILL after grace.
	Kill(ctx context.Context, allocationID string, grace time.Duration) error
}

// AgentLister is implemented by resource managers whose machines come and
// go (Kubernetes nodes): the scheduler sees the agents they list for a pool,
// with the slots Resolute may use on each, instead of one "local" agent with
// the pool's fixed slot ids.
type AgentLister interface {
	Agents(pool string) []scheduler.Agent
}
