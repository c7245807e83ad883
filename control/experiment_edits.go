package control

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// The edits of an experiment that are not changes of its state: archive,
// delete, move, its name, notes, labels and scheduling. Each is for the
// experiment's owner or an administrator, checked in the transaction that
// writes: under the experiment's row lock, except the scheduling, which
// takes the queue's lock first (as the queue does) and reads the row there.

// Limits of what an experiment's page edits.
const (
	MaxNotesBytes = 64 << 10
	MaxLabelChars = 255
	MaxLabels     = 50
)

// SetArchived archives or unarchives an experiment; only finished
// experiments are archived.
func (x *Experiments) SetArchived(ctx context.Context, a authz.Actor, id int64, archived bool) error {
	return x.c.db.InTx(ctx, func(q *db.Queries) error {
		e, err := changeableExperiment(ctx, q, a, id)
		if err != nil {
			return err
		}
		if archived && !resolute.Terminal(e.State) {
			return resolute.Errorf(resolute.EConflict, "experiment %d is %s; only finished experiments can be archived", e.ID, e.State)
		}
		return q.SetExperimentArchived(ctx, id, archived)
	})
}

// Delete deletes a finished experiment with everything it reported; none of
// its checkpoints may be a model version.
func (x *Experiments) Delete(ctx context.Context, a authz.Actor, id int64) error {
	var gcTask string
	err := x.c.db.InTx(ctx, func(q *db.Queries) error {
		e, err := changeableExperiment(ctx, q, a, id)
		if err != nil {
			return err
		}
		if !resolute.Terminal(e.State) {
			return resolute.Errorf(resolute.EConflict, "experiment %d is %s; cancel or kill it before deleting it", e.ID, e.State)
		}
		cps, err := q.ExperimentCheckpoints(ctx, id)
		if err != nil {
			return err
		}
		uuids := make([]string, len(cps))
		for i, c := range cps {
			uuids[i] = c.UUID
		}
		if err := refuseIfRegistered(ctx, q, uuids...); err != nil {
			return err
		}
		// Its checkpoints' files go too, as in Determined: a GC task that
		// outlives the experiment, with the storage in its own config.
		var files []string
		for _, c := range cps {
			if c.State != "DELETED" {
				files = append(files, c.UUID)
			}
		}
		if len(files) > 0 {
			cfg, err := expconf.ParseExperiment(e.Config)
			if err != nil {
				return err
			}
			if gcTask, err = queueCheckpointGC(ctx, q, x.c.opts.AuxPool, e, cfg.CheckpointStorage, files); err != nil {
				return err
			}
		}
		return q.DeleteExperiment(ctx, id)
	})
	if err == nil {
		x.c.logger.Info("experiment deleted", "experiment", id, "user", a.Username(), "checkpoint_gc_task", gcTask)
		x.c.wakeAdmission()
	}
	return err
}

// Move puts an experiment in another project, not an archived one.
func (x *Experiments) Move(ctx context.Context, a authz.Actor, id, projectID int64) error {
	return x.c.db.InTx(ctx, func(q *db.Queries) error {
		e, err := changeableExperiment(ctx, q, a, id)
		if err != nil {
			return err
		}
		p, err := q.ProjectForUpdate(ctx, projectID)
		if err != nil {
			return err
		}
		// Under RBAC the destination must be the mover's to add experiments to.
		if err := authz.Can(a, authz.CreateExperiment, authz.Project(p, 0)); err != nil {
			return err
		}
		if p.Archived {
			return resolute.Errorf(resolute.EConflict, "project %q is archived", p.Name)
		}
		// An experiment that may still run must be allowed its pool in the
		// workspace it moves to (resource-pool bindings).
		if !resolute.Terminal(e.State) {
			pl, err := placementOf(ctx, q, projectID)
			if err != nil {
				return err
			}
			if err := CheckPoolUse(e.ResourcePool, pl.workspace, pl.bindings); err != nil {
				return err
			}
		}
		return q.MoveExperiment(ctx, id, projectID)
	})
}

// Patch edits an experiment's name, description, labels, notes and
// resources (priority, weight, max slots); absent fields stay. The same
// rules hold as for each edit on its own: resources change as SetScheduling
// changes them (first, in the queue's lock order), the rest under the
// experiment's row lock. It returns the experiment as edited.
func (x *Experiments) Patch(ctx context.Context, a authz.Actor, id int64, req resolute.PatchExperimentRequest) (resolute.Experiment, error) {
	if err := checkPatch(req); err != nil {
		return resolute.Experiment{}, err
	}
	res := req.Resources
	if res != nil && (res.Priority != nil || res.Weight != nil || res.MaxSlots != nil) {
		e, err := x.c.db.Experiment(ctx, id)
		if err != nil {
			return e, err
		}
		// Of an experiment in the queue, as the queue changes them; of one
		// that ended, they are only recorded, below.
		if !resolute.Terminal(e.State) {
			s := Scheduling{Priority: res.Priority, Weight: res.Weight, MaxSlots: res.MaxSlots}
			if s.MaxSlots == nil { // absent stays, where the form's empty field means no limit
				s.MaxSlots = e.MaxSlots
			}
			if _, err := x.SetScheduling(ctx, a, id, s); err != nil {
				return resolute.Experiment{}, err
			}
			res = nil
		}
	}
	return inTx(ctx, x.c.db, func(q *db.Queries) (resolute.Experiment, error) {
		e, err := changeableExperiment(ctx, q, a, id)
		if err != nil {
			return e, err
		}
		if res != nil && resolute.Terminal(e.State) {
			if res.Priority != nil {
				e.Priority = res.Priority
			}
			if res.Weight != nil {
				e.Weight = *res.Weight
			}
			if res.MaxSlots != nil {
				e.MaxSlots = res.MaxSlots
			}
		}
		if req.Name != nil {
			e.Name = *req.Name
		}
		if req.Description != nil {
			e.Description = *req.Description
		}
		if req.Notes != nil {
			e.Notes = *req.Notes
		}
		if req.Labels != nil {
			e.Labels = *req.Labels
		}
		if err := q.UpdateExperiment(ctx, e); err != nil {
			return e, err
		}
		return q.Experiment(ctx, id)
	})
}

// checkPatch checks an edit with the rules of each field's own edit.
func checkPatch(req resolute.PatchExperimentRequest) error {
	if req.Name != nil {
		if err := CheckName("name", *req.Name, 512); err != nil {
			return err
		}
	}
	if req.Description != nil {
		if err := CheckDescription("description", *req.Description, MaxDescriptionLen); err != nil {
			return err
		}
	}
	if req.Notes != nil {
		if err := checkNotes(*req.Notes); err != nil {
			return err
		}
	}
	if req.Labels != nil {
		if len(*req.Labels) > MaxLabels {
			return resolute.Errorf(resolute.EInvalid, "labels: at most %d, got %d", MaxLabels, len(*req.Labels))
		}
		for _, l := range *req.Labels {
			if err := checkLabel(l); err != nil {
				return resolute.Errorf(resolute.EInvalid, "labels: %s", strings.TrimPrefix(resolute.ErrorMessage(err), "label: "))
			}
		}
	}
	if res := req.Resources; res != nil {
		if res.Priority != nil && (*res.Priority < 1 || *res.Priority > 99) {
			return resolute.Errorf(resolute.EInvalid, "resources.priority: must be between 1 and 99, got %d", *res.Priority)
		}
		if res.Weight != nil && *res.Weight <= 0 {
			return resolute.Errorf(resolute.EInvalid, "resources.weight: must be more than 0, got %v", *res.Weight)
		}
		if res.MaxSlots != nil && *res.MaxSlots < 1 {
			return resolute.Errorf(resolute.EInvalid, "resources.max_slots: must be at least 1, got %d", *res.MaxSlots)
		}
	}
	return nil
}

// SetNotes replaces an experiment's notes (Markdown, at most MaxNotesBytes).
func (x *Experiments) SetNotes(ctx context.Context, a authz.Actor, id int64, notes string) error {
	return x.c.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := changeableExperiment(ctx, q, a, id); err != nil {
			return err
		}
		if err := checkNotes(notes); err != nil {
			return err
		}
		return q.SetExperimentNotes(ctx, id, notes)
	})
}

// AddLabel adds a label to an experiment, which has at most MaxLabels, and
// returns its labels.
func (x *Experiments) AddLabel(ctx context.Context, a authz.Actor, id int64, label string) ([]string, error) {
	return inTx(ctx, x.c.db, func(q *db.Queries) ([]string, error) {
		e, err := changeableExperiment(ctx, q, a, id)
		if err != nil {
			return nil, err
		}
		if err := checkLabel(label); err != nil {
			return nil, err
		}
		if !slices.Contains(e.Labels, label) && len(e.Labels) >= MaxLabels {
			return nil, resolute.Errorf(resolute.EInvalid, "label: an experiment has at most %d labels", MaxLabels)
		}
		return q.AddExperimentLabel(ctx, id, label)
	})
}

// RemoveLabel removes a label from an experiment and returns the labels
// left.
func (x *Experiments) RemoveLabel(ctx context.Context, a authz.Actor, id int64, label string) ([]string, error) {
	return inTx(ctx, x.c.db, func(q *db.Queries) ([]string, error) {
		if _, err := changeableExperiment(ctx, q, a, id); err != nil {
			return nil, err
		}
		if err := checkLabel(label); err != nil {
			return nil, err
		}
		return q.RemoveExperimentLabel(ctx, id, label)
	})
}

// checkNotes refuses notes that are too long or not text.
func checkNotes(notes string) error {
	switch {
	case len(notes) > MaxNotesBytes:
		return resolute.Errorf(resolute.EInvalid, "notes: must be at most %d bytes, got %d", MaxNotesBytes, len(notes))
	case !utf8.ValidString(notes) || strings.ContainsRune(notes, 0):
		return resolute.Errorf(resolute.EInvalid, "notes: must be UTF-8 text without NUL characters")
	}
	return nil
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return resolute.Errorf(resolute.EInvalid, "label: must not be empty")
	case utf8.RuneCountInString(label) > MaxLabelChars:
		return resolute.Errorf(resolute.EInvalid, "label: must be at most %d characters", MaxLabelChars)
	case !utf8.ValidString(label) || resolute.HasControl(label, ""):
		return resolute.Errorf(resolute.EInvalid, "label: must be text without control characters")
	}
	return nil
}

// Scheduling is what the Job Queue edits of an experiment: nil Priority
// and Weight stay as they are; nil MaxSlots means no limit.
type Scheduling struct {
	Priority *int
	Weight   *float64
	MaxSlots *int
}

// SetScheduling sets an experiment's priority, weight and slot limit; the
// scheduling of an experiment that ended cannot change. It returns the
// experiment as changed.
func (x *Experiments) SetScheduling(ctx context.Context, a authz.Actor, id int64, s Scheduling) (resolute.Experiment, error) {
	e, err := inTx(ctx, x.c.db, func(q *db.Queries) (resolute.Experiment, error) {
		// No row lock first: the queue's lock comes before the
		// experiment's, as in Queue.Update, so the two cannot deadlock.
		e, err := q.Experiment(ctx, id)
		if err != nil {
			return e, err
		}
		if err := authz.Can(a, authz.ChangeExperiment, authz.Experiment(e)); err != nil {
			return e, err
		}
		if resolute.Terminal(e.State) {
			return e, resolute.Errorf(resolute.EConflict, "experiment %d is %s; the scheduling of an experiment that ended cannot change", e.ID, e.State)
		}
		if s.MaxSlots != nil && *s.MaxSlots < 1 {
			return e, resolute.Errorf(resolute.EInvalid, "max_slots: expected a whole number of at least 1, or nothing for no limit; got %d", *s.MaxSlots)
		}
		u := resolute.QueueControl{JobID: JobID(id)}
		if s.Priority != nil && (e.Priority == nil || *e.Priority != *s.Priority) {
			u.Priority = s.Priority
		}
		if s.Weight != nil && *s.Weight != e.Weight {
			u.Weight = s.Weight
		}
		if u.Priority != nil || u.Weight != nil {
			if err := x.queue.updateOne(ctx, q, a, u); err != nil {
				return e, err
			}
		}
		if err := q.SetExperimentMaxSlots(ctx, id, s.MaxSlots); err != nil {
			return e, err
		}
		return q.Experiment(ctx, id)
	})
	if err == nil {
		x.c.wakeAdmission()
	}
	return e, err
}

// changeableExperiment locks experiment id for a change by a and returns
// it.
func changeableExperiment(ctx context.Context, q *db.Queries, a authz.Actor, id int64) (resolute.Experiment, error) {
	e, err := q.ExperimentForUpdate(ctx, id)
	if err != nil {
		return e, err
	}
	return e, authz.Can(a, authz.ChangeExperiment, authz.Experiment(e))
}
