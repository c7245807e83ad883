package control

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
)

// ResourceManager is the seam between control and what runs tasks: local/
// (process groups on the master's machine) and k8s/ (pods) implement all of
// it with the root package's types, and control never asks which one it
// holds. Everything that differs between them is theirs: each sets
// DET_RESOURCES_TYPE and puts the harness on the task's PYTHONPATH itself.
//
// The contract:
//
//   - Recover is called once, before the first Launch: it returns every
//     allocation of an earlier master that still runs (adopted: it holds its
//     slots, can be killed and exec'd into, and reports AllocationExited when
//     it ends, with no AllocationStarted) and every one that ended while no
//     master ran, with the status it recorded. A running allocation of the
//     database that it does not return was lost.
//   - Launch starts an allocation on the slots the scheduler chose (of the
//     agents Agents listed). When it returns nil, Events reports the
//     allocation: AllocationStarted once it runs, its AllocationLog lines,
//     and exactly one AllocationExited last (Requeue when it never really
//     ran). When it returns an error, nothing is reported; an EConflict
//     error says a slot is still held.
//   - Kill stops an allocation (SIGTERM, then SIGKILL after grace); its
//     AllocationExited says Killed. An unknown allocation is ENotFound.
//   - Close is called by whoever made the resource manager, once control
//     has stopped: it stops watching and closes Events; tasks keep running,
//     for the next master's Recover.
type ResourceManager interface {
	// Agents lists the machines (Kubernetes nodes, or the master's own
	// machine) that may run pool's work, each with every slot and what
	// holds it; pool "" lists every machine, with the pool each is in. A
	// pool's slot_ids narrow it to some of a machine's slots (control
	// applies them).
	Agents(pool string) []resolute.Agent
	// SlotType is what a slot is: cuda or cpu.
	SlotType() string
	// ListenAddr is the address a task's services (notebooks, TensorBoards)
	// listen on so that the master reaches them at the address
	// AllocationStarted reports: loopback on the master's machine, every
	// address in a pod.
	ListenAddr() string
	// CheckContainer refuses, with the reason, the container settings
	// (resources.shm_size, resources.devices, capabilities) it cannot
	// apply; it is asked when a config is submitted, so that none is
	// accepted and then ignored.
	CheckContainer(s resolute.ContainerSettings) error
	// Launch starts an allocation; see the contract above.
	Launch(ctx context.Context, spec resolute.LaunchSpec) error
	// Kill stops an allocation: SIGTERM, then SIGKILL after grace.
	Kill(ctx context.Context, allocationID string, grace time.Duration) error
	// Events reports allocations starting, their log lines and their ends.
	Events() <-chan resolute.AllocationEvent
	// Exec starts argv in a running allocation, with a terminal when tty.
	Exec(ctx context.Context, allocationID string, argv []string, tty bool) (resolute.Stream, error)
	// Recover finds the allocations an earlier master left.
	Recover(ctx context.Context) ([]resolute.RecoveredAllocation, error)
	// Close stops the resource manager; tasks keep running.
	Close() error
}
