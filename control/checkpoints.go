package control

import (
	"context"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Checkpoints records the checkpoints trials report and what becomes of
// their files.
type Checkpoints struct {
	db   *db.DB
	exps *Experiments // queues the GC tasks that delete files
}

// Report records a checkpoint that trial c.TrialID wrote, which becomes the
// trial's latest: only the trial's own allocation reports for it. Reported
// again, a checkpoint's files and metadata are replaced, again only by its
// own trial's allocation.
func (s *Checkpoints) Report(ctx context.Context, a authz.Actor, c resolute.Checkpoint) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		t, err := trialFor(ctx, q, a, authz.Report, c.TrialID)
		if err != nil {
			return err
		}
		old, err := q.CheckpointForUpdate(ctx, c.UUID)
		switch {
		case err == nil && old.TrialID != t.ID:
			e, err := q.Experiment(ctx, old.ExperimentID)
			if err != nil {
				return err
			}
			if err := authz.Can(a, authz.Report, authz.Checkpoint(old, e)); err != nil {
				return err
			}
		case err != nil && resolute.ErrorCode(err) != resolute.ENotFound:
			return err
		case err == nil:
			// Reported again: its files may not change under a model version.
			reg, err := q.CheckpointRegistrations(ctx, []string{c.UUID})
			if err != nil {
				return err
			}
			if r, ok := reg[c.UUID]; ok {
				return resolute.Errorf(resolute.EConflict, "checkpoint %s is version %d of model %q; it cannot be reported again", c.UUID, r.Version, r.Model)
			}
		}
		c.ExperimentID = t.ExperimentID
		return q.CreateCheckpoint(ctx, c)
	})
}

// CheckpointFiles are the files left of a checkpoint, path to size; none
// means the checkpoint is deleted.
type CheckpointFiles struct {
	UUID      string
	Resources map[string]int64
}

// SetFiles records what remains of checkpoints whose files were (partly)
// deleted, all or none: each must be the caller's to change (its
// experiment's owner, an administrator, or its trial's own allocation), and
// none may be a model version.
func (s *Checkpoints) SetFiles(ctx context.Context, a authz.Actor, files []CheckpointFiles) error {
	// Locked in one order, so two requests naming the same checkpoints
	// wait for each other instead of deadlocking.
	files = slices.Clone(files)
	slices.SortFunc(files, func(x, y CheckpointFiles) int { return strings.Compare(x.UUID, y.UUID) })
	return s.db.InTx(ctx, func(q *db.Queries) error {
		for _, f := range files {
			c, err := q.CheckpointForUpdate(ctx, f.UUID)
			if err != nil {
				return err
			}
			e, err := q.Experiment(ctx, c.ExperimentID)
			if err != nil {
				return err
			}
			if err := authz.Can(a, authz.ChangeCheckpoint, authz.Checkpoint(c, e)); err != nil {
				return err
			}
			if err := refuseIfRegistered(ctx, q, c.UUID); err != nil {
				return err
			}
			if err := q.UpdateCheckpointResources(ctx, c.UUID, f.Resources); err != nil {
				return err
			}
			if len(f.Resources) == 0 {
				if err := q.SetCheckpointDeleted(ctx, c.UUID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// refuseIfRegistered refuses to delete (part of) a checkpoint that a model
// version uses, naming the model and version.
func refuseIfRegistered(ctx context.Context, q *db.Queries, uuids ...string) error {
	reg, err := q.CheckpointRegistrations(ctx, uuids)
	if err != nil {
		return err
	}
	for _, u := range uuids {
		if v, ok := reg[u]; ok {
			return resolute.Errorf(resolute.EConflict, "checkpoint %s is version %d of model %q; delete that version first", u, v.Version, v.Model)
		}
	}
	return nil
}
