package control

import (
	"context"
	"encoding/json"
	"math"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/searcher"
)

// EarlyExitInvalidHP is the reason a trial reports when it raised
// det.InvalidHP.
const EarlyExitInvalidHP = "EXITED_REASON_INVALID_HP"

// ValidationReported hands a trial's validation metrics, reported by run
// runID at steps, to its searcher and keeps the best searcher metric of the
// trial and the experiment. A stored report is handed over once: a retried
// POST, or a report hidden by a restart, is not handed over again.
func (x *Experiments) ValidationReported(ctx context.Context, trialID int64, runID int, steps int64, metrics map[string]any) error {
	t, err := x.db.Trial(ctx, trialID)
	if err != nil {
		return err
	}
	err = x.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, t.ExperimentID)
		if err != nil {
			return err
		}
		if tell, err := q.TellSearcher(ctx, t.ID, runID, steps); err != nil || !tell {
			return err
		}
		if err := x.recordBest(ctx, q, r, t, metrics); err != nil {
			return err
		}
		if resolute.Terminal(t.State) || t.State == resolute.StateStoppingCompleted {
			return nil // the searcher is done with it
		}
		actions, err := r.s.ValidationReported(searcher.RequestID(t.RequestID), metrics)
		if err != nil {
			return resolute.Errorf(resolute.EInvalid, "validation metrics: %s", resolute.ErrorMessage(err))
		}
		return x.apply(ctx, q, r, actions)
	})
	if err == nil {
		x.Wake()
	}
	return err
}

func (x *Experiments) recordBest(ctx context.Context, q *db.Queries, r *run, t resolute.Trial, metrics map[string]any) error {
	v, ok := number(metrics[r.cfg.Searcher.Metric])
	if !ok {
		return nil
	}
	better := func(old *float64) bool {
		if old == nil {
			return true
		}
		if r.cfg.Searcher.SmallerIsBetter {
			return v < *old
		}
		return v > *old
	}
	if better(t.BestValidation) {
		if err := q.SetTrialBestValidation(ctx, t.ID, v); err != nil {
			return err
		}
	}
	e, err := q.Experiment(ctx, r.id)
	if err != nil {
		return err
	}
	if better(e.BestValidation) {
		return q.SetExperimentBestValidation(ctx, r.id, v)
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// AllocationExited turns the end of an allocation into the next state of its
// trial: completed, paused, canceled, restarted from its latest checkpoint
// (while the experiment's max_restarts lasts), or errored; the searcher hears
// of trials that ended. A nil exitCode means the status is unknown.
func (x *Experiments) AllocationExited(ctx context.Context, allocationID string, exitCode *int, reason string) error {
	a, err := x.db.Allocation(ctx, allocationID)
	if err != nil {
		return err
	}
	if a.TrialID == nil {
		return x.taskEnded(ctx, a, exitCode, reason)
	}
	if exitCode == nil {
		// Its exit status is lost (adopted after a restart): run it again
		// from its latest checkpoint, as after a preemption.
		a.Preempt = true
	}
	t, err := x.db.Trial(ctx, *a.TrialID)
	if err != nil {
		return err
	}
	err = x.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, t.ExperimentID)
		if err != nil {
			return err
		}
		ended, err := q.EndAllocation(ctx, allocationID, exitCode, reason)
		if err != nil || !ended {
			return err // already handled
		}
		t, err = q.Trial(ctx, t.ID) // under the lock
		if err != nil {
			return err
		}
		return x.trialRunEnded(ctx, q, r, t, a, exitCode == nil || *exitCode == 0)
	})
	if err != nil {
		return err
	}
	x.Wake()
	if err := x.CollectGarbage(ctx, t.ExperimentID); err != nil {
		x.logger.Error("checkpoint garbage collection", "experiment", t.ExperimentID, "err", err)
	}
	return nil
}

func (x *Experiments) trialRunEnded(ctx context.Context, q *db.Queries, r *run, t resolute.Trial, a resolute.Allocation, ok bool) error {
	exited := func(state string, why searcher.ExitReason) error {
		if err := q.SetTrialState(ctx, t.ID, state); err != nil {
			return err
		}
		actions, err := r.s.TrialExited(searcher.RequestID(t.RequestID), why)
		if err != nil {
			return err
		}
		return x.apply(ctx, q, r, actions)
	}
	switch {
	case t.EarlyExit == EarlyExitInvalidHP:
		return exited(resolute.StateCompleted, searcher.ExitInvalidHP)
	case t.State == resolute.StateStoppingCompleted:
		return exited(resolute.StateCompleted, searcher.ExitCompleted)
	case t.State == resolute.StateStoppingCanceled || t.State == resolute.StateStoppingKilled ||
		r.state == resolute.StateStoppingCanceled || r.state == resolute.StateStoppingKilled:
		return exited(resolute.StateCanceled, searcher.ExitUserCanceled)
	case r.state == resolute.StatePaused:
		if err := q.SetTrialState(ctx, t.ID, resolute.StatePaused); err != nil {
			return err
		}
		return x.settle(ctx, q, r)
	case ok && a.Preempt:
		// Preempted for someone else's work: back in the queue, resuming
		// from its checkpoint; preemption is not a failure.
		return x.queueTrial(ctx, q, t, r.cfg)
	case ok:
		return exited(resolute.StateCompleted, searcher.ExitCompleted)
	}
	n, err := q.AddExperimentRestart(ctx, r.id)
	if err != nil {
		return err
	}
	if n <= r.cfg.MaxRestarts && r.state == resolute.StateActive {
		x.logger.Info("trial failed; restarting from its latest checkpoint", "trial", t.ID, "restart", n, "max_restarts", r.cfg.MaxRestarts)
		if err := q.AddTrialRestart(ctx, t.ID); err != nil {
			return err
		}
		return x.queueTrial(ctx, q, t, r.cfg)
	}
	x.logger.Info("trial errored", "trial", t.ID, "restarts", n-1, "max_restarts", r.cfg.MaxRestarts)
	return exited(resolute.StateError, searcher.ExitErrored)
}

// EarlyExit records that a trial is ending on its own, e.g. InvalidHP.
func (x *Experiments) EarlyExit(ctx context.Context, trialID int64, reason string) error {
	switch reason {
	case EarlyExitInvalidHP, "EXITED_REASON_USER_REQUESTED_STOP", "EXITED_REASON_UNSPECIFIED":
	default:
		return resolute.Errorf(resolute.EInvalid, "reason: unknown early exit reason %q", reason)
	}
	return x.db.SetTrialEarlyExit(ctx, trialID, reason)
}

// SetState carries out a user's action on an experiment: pause, activate,
// cancel or kill.
func (x *Experiments) SetState(ctx context.Context, id int64, action string) error {
	err := x.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, id)
		if err != nil {
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
		x.logger.Info("experiment state changed", "experiment", id, "from", from, "to", next)
		return x.settle(ctx, q, r)
	})
	if err == nil {
		x.Wake()
	}
	return err
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
func (x *Experiments) KillTrial(ctx context.Context, trialID int64) error {
	t, err := x.db.Trial(ctx, trialID)
	if err != nil {
		return err
	}
	if resolute.Terminal(t.State) {
		return resolute.Errorf(resolute.EConflict, "trial %d is %s", t.ID, t.State)
	}
	err = x.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, t.ExperimentID)
		if err != nil {
			return err
		}
		a, err := q.CurrentTrialAllocation(ctx, t.ID)
		if resolute.ErrorCode(err) == resolute.ENotFound || (err == nil && a.State == resolute.AllocationPending) {
			if err == nil {
				if _, err := q.EndAllocation(ctx, a.ID, nil, "killed before it started"); err != nil {
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
		x.Wake()
	}
	return err
}
