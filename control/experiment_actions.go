package control

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/searcher"
)

// SetState carries out an action on an experiment: pause, activate, cancel
// or kill. Its owner or an administrator (or the system) may; the check
// is made under the experiment's row lock, in the transaction that changes
// it.
func (x *Experiments) SetState(ctx context.Context, a authz.Actor, id int64, action string) error {
	err := x.c.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, id)
		if err != nil {
			return err
		}
		if err := mayChange(ctx, q, a, id); err != nil {
			return err
		}
		from := r.state
		next, stopping, err := transition(from, action)
		if err != nil {
			return err
		}
		if next == from {
			return nil
		}
		if err := q.SetExperimentState(ctx, id, next); err != nil {
			return err
		}
		r.state = next
		trials, err := q.Trials(ctx, id)
		if err != nil {
			return err
		}
		for _, t := range trials {
			switch {
			case next == resolute.StateActive && t.State == resolute.StatePaused:
				if err := q.SetTrialState(ctx, t.ID, resolute.StateActive); err != nil {
					return err
				}
				// A run the pause asked to stop may still be checkpointing: its
				// exit queues the next run (a preempted run of an active
				// experiment resumes), so a second one must not start beside it.
				if _, err := q.CurrentTrialAllocation(ctx, t.ID); err == nil {
					continue
				} else if resolute.ErrorCode(err) != resolute.ENotFound {
					return err
				}
				if err := x.queueTrial(ctx, q, t, r.cfg); err != nil {
					return err
				}
			case stopping != "" && !resolute.Terminal(t.State):
				if t.State == resolute.StatePaused && stopping != resolute.StatePaused {
					if err := q.SetTrialState(ctx, t.ID, resolute.StateCanceled); err != nil {
						return err
					}
					continue
				}
				if err := x.stopTrial(ctx, q, t, stopping, r.cfg); err != nil {
					return err
				}
			}
		}
		x.c.logger.Info("experiment state changed", "experiment", id, "from", from, "to", next, "by", a.Username())
		return x.settle(ctx, q, r)
	})
	if err == nil {
		x.c.wakeAdmission()
	}
	return err
}

// mayChange asks whether a may change experiment id, whose row the caller
// has locked.
func mayChange(ctx context.Context, q *db.Queries, a authz.Actor, id int64) error {
	e, err := q.Experiment(ctx, id)
	if err != nil {
		return err
	}
	return authz.Can(a, authz.ChangeExperiment, authz.Experiment(e))
}

// transition is the pure rule for user actions: the next experiment state
// and how its running trials stop ("" for not at all).
func transition(from, action string) (next, stopping string, err error) {
	if resolute.Terminal(from) {
		return "", "", resolute.Errorf(resolute.EConflict, "the experiment is %s; it cannot be changed", from)
	}
	switching := from == resolute.StateStoppingCanceled || from == resolute.StateStoppingKilled ||
		from == resolute.StateStoppingCompleted || from == resolute.StateStoppingError
	switch action {
	case "pause":
		if from == resolute.StatePaused {
			return from, "", nil
		} else if switching {
			return "", "", resolute.Errorf(resolute.EConflict, "the experiment is %s; it cannot be paused", from)
		}
		return resolute.StatePaused, resolute.StatePaused, nil
	case "activate":
		if from == resolute.StateActive {
			return from, "", nil
		} else if switching {
			return "", "", resolute.Errorf(resolute.EConflict, "the experiment is %s; it cannot be activated", from)
		}
		return resolute.StateActive, "", nil
	case "cancel":
		if from == resolute.StateStoppingCanceled || from == resolute.StateStoppingKilled {
			return from, "", nil
		}
		return resolute.StateStoppingCanceled, resolute.StateStoppingCanceled, nil
	case "kill":
		return resolute.StateStoppingKilled, resolute.StateStoppingKilled, nil
	}
	return "", "", resolute.Errorf(resolute.EInvalid, "unknown action %q", action)
}

// KillTrial stops one trial at once; the searcher hears it was canceled.
// The owner of its experiment or an administrator may.
func (x *Experiments) KillTrial(ctx context.Context, a authz.Actor, trialID int64) error {
	t, err := x.c.db.Trial(ctx, trialID)
	if err != nil {
		return err
	}
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, t.ExperimentID)
		if err != nil {
			return err
		}
		if err := mayChange(ctx, q, a, t.ExperimentID); err != nil {
			return err
		}
		if t, err = q.Trial(ctx, trialID); err != nil { // under the lock
			return err
		}
		if resolute.Terminal(t.State) {
			return resolute.Errorf(resolute.EConflict, "trial %d is %s", t.ID, t.State)
		}
		al, err := q.CurrentTrialAllocation(ctx, t.ID)
		if resolute.ErrorCode(err) == resolute.ENotFound || (err == nil && al.State == resolute.AllocationPending) {
			if err == nil {
				if _, err := q.EndAllocation(ctx, al.ID, nil, "killed before it started"); err != nil {
					return err
				}
			}
			if err := q.SetTrialState(ctx, t.ID, resolute.StateCanceled); err != nil {
				return err
			}
			actions, err := r.s.TrialExited(searcher.RequestID(t.RequestID), searcher.ExitUserCanceled)
			if err != nil {
				return err
			}
			return x.apply(ctx, q, r, actions)
		} else if err != nil {
			return err
		}
		return x.stopTrial(ctx, q, t, resolute.StateStoppingKilled, r.cfg)
	})
	if err == nil {
		x.c.wakeAdmission()
	}
	return err
}
