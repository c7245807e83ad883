package control

import (
	"context"
	"maps"
	"slices"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// Delete deletes checkpoints, all or none (Determined's DELETE
// /api/v1/checkpoints): each must be completed, no model version, and the
// caller must be its experiment's owner or an administrator. A
// CHECKPOINT_GC task per experiment deletes their files where tasks run
// (the shared directory, or the bucket) and marks them deleted when it
// succeeds, as the GC policy's tasks do. A checkpoint another GC task
// already holds is left to it.
func (s *Checkpoints) Delete(ctx context.Context, a authz.Actor, uuids []string) error {
	if len(uuids) == 0 {
		return resolute.Errorf(resolute.EInvalid, "checkpointUuids: give at least one checkpoint")
	}
	uuids = slices.Clone(uuids)
	slices.Sort(uuids) // locked in one order, as SetFiles does
	uuids = slices.Compact(uuids)
	x := s.exps
	var queued []string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		byExp := map[int64][]string{}
		exps := map[int64]resolute.Experiment{}
		for _, u := range uuids {
			c, err := q.CheckpointForUpdate(ctx, u)
			if err != nil {
				return err
			}
			e, ok := exps[c.ExperimentID]
			if !ok {
				if e, err = q.Experiment(ctx, c.ExperimentID); err != nil {
					return err
				}
				exps[e.ID] = e
			}
			if err := authz.Can(a, authz.ChangeExperiment, authz.Experiment(e)); err != nil {
				return err
			}
			if c.State != "COMPLETED" {
				return resolute.Errorf(resolute.EConflict, "checkpoint %s is %s; only a completed checkpoint can be deleted", u, c.State)
			}
			byExp[e.ID] = append(byExp[e.ID], u)
		}
		if err := refuseIfRegistered(ctx, q, uuids...); err != nil {
			return err
		}
		held, err := q.CheckpointsBeingCollected(ctx, uuids)
		if err != nil {
			return err
		}
		for _, id := range slices.Sorted(maps.Keys(byExp)) {
			e := exps[id]
			var free []string
			for _, u := range byExp[id] {
				if !held[u] {
					free = append(free, u)
				}
			}
			if len(free) == 0 {
				continue
			}
			cfg, err := expconf.ParseExperiment(e.Config)
			if err != nil {
				return err
			}
			task, err := queueCheckpointGC(ctx, q, x.c.opts.AuxPool, e, cfg.CheckpointStorage, free)
			if err != nil {
				return err
			}
			queued = append(queued, task)
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.c.logger.Info("checkpoints deleted", "checkpoints", len(uuids), "user", a.Username(), "checkpoint_gc_tasks", queued)
	x.c.wakeAdmission()
	return nil
}
