package control

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Allocations takes what a running allocation says of itself: that it heard
// its preemption signal, and where its pods are for the rendezvous. Only
// that allocation's own token may.
type Allocations struct {
	db *db.DB
}

// AckPreemption records that allocation id heard its preemption signal and
// is checkpointing.
func (s *Allocations) AckPreemption(ctx context.Context, a authz.Actor, id string) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := ownAllocation(ctx, q, a, id); err != nil {
			return err
		}
		return q.AckPreemption(ctx, id)
	})
}

// JoinRendezvous records where a pod of allocation id is; the pods then
// read each other's addresses (db.Rendezvous).
func (s *Allocations) JoinRendezvous(ctx context.Context, a authz.Actor, id string, pod db.RendezvousPod) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := ownAllocation(ctx, q, a, id); err != nil {
			return err
		}
		return q.PostRendezvous(ctx, id, pod)
	})
}

// ownAllocation reads allocation id for a report by a, which must be that
// allocation. A caller that is no allocation learns nothing of it.
func ownAllocation(ctx context.Context, q *db.Queries, a authz.Actor, id string) (resolute.Allocation, error) {
	al, err := q.Allocation(ctx, id)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		al = resolute.Allocation{ID: id}
	} else if err != nil {
		return al, err
	}
	if err := authz.Can(a, authz.Report, authz.AllocationOf(al)); err != nil {
		return al, err
	}
	return al, nil
}
