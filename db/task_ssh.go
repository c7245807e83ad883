package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// CreateTaskSSHKeys stores a shell's SSH keys.
func (q *Queries) CreateTaskSSHKeys(ctx context.Context, k resolute.TaskSSHKeys) error {
	return translate(q.q.CreateTaskSSHKeys(ctx, gen.CreateTaskSSHKeysParams{TaskID: k.TaskID, Login: k.Login,
		PrivateKey: k.PrivateKey, PublicKey: k.PublicKey, HostPrivateKey: k.HostPrivateKey, HostPublicKey: k.HostPublicKey}),
		"SSH keys of task %s", k.TaskID)
}

// TaskSSHKeys returns a shell's SSH keys; a task without them is not_found.
func (q *Queries) TaskSSHKeys(ctx context.Context, taskID string) (resolute.TaskSSHKeys, error) {
	k, err := q.q.TaskSSHKeys(ctx, taskID)
	if err != nil {
		return resolute.TaskSSHKeys{}, translate(err, "SSH keys of task %s", taskID)
	}
	return resolute.TaskSSHKeys{TaskID: k.TaskID, Login: k.Login, PrivateKey: k.PrivateKey, PublicKey: k.PublicKey,
		HostPrivateKey: k.HostPrivateKey, HostPublicKey: k.HostPublicKey}, nil
}

// SetAllocationAddr records where a trial's allocation is reached (a pod
// IP), for its proxy ports.
func (q *Queries) SetAllocationAddr(ctx context.Context, allocationID, addr string) error {
	return translate(q.q.SetAllocationAddr(ctx, gen.SetAllocationAddrParams{AllocationID: allocationID, Addr: addr}),
		"allocation %s", allocationID)
}

// RunningTrialAllocation returns the ID of trial id's running allocation
// and where it is reached ("" for the master's loopback); a trial that does
// not run is not_found.
func (q *Queries) RunningTrialAllocation(ctx context.Context, trialID int64) (id, addr string, err error) {
	r, err := q.q.RunningTrialAllocation(ctx, &trialID)
	if err != nil {
		return "", "", translate(err, "a running allocation of trial %d", trialID)
	}
	return r.ID, r.Addr, nil
}
