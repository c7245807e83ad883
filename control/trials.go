package control

import (
	"context"
	"math"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Trials takes what a trial's task reports of itself through the task API:
// its progress, its runner's state, an early exit and its metrics. Only the
// trial's own allocation may report for it (authz.Report).
type Trials struct {
	db      *db.DB
	exps    *Experiments
	metrics *MetricsWriter
}

// ReportProgress records a trial's progress, from 0 to 1, and its
// experiment's progress, which counts it.
func (s *Trials) ReportProgress(ctx context.Context, a authz.Actor, id int64, progress float64) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		t, err := trialFor(ctx, q, a, authz.Report, id)
		if err != nil {
			return err
		}
		if progress < 0 || progress > 1 || math.IsNaN(progress) {
			return resolute.Errorf(resolute.EInvalid, "progress: must be between 0 and 1, got %v", progress)
		}
		return s.exps.trialProgressed(ctx, q, t, progress, t.StepsCompleted)
	})
}

// SetRunnerState records what a trial's runner says it is doing.
func (s *Trials) SetRunnerState(ctx context.Context, a authz.Actor, id int64, state string) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := trialFor(ctx, q, a, authz.Report, id); err != nil {
			return err
		}
		return q.SetTrialRunnerState(ctx, id, state)
	})
}

// EarlyExit records that a trial is ending on its own, e.g. InvalidHP.
func (s *Trials) EarlyExit(ctx context.Context, a authz.Actor, id int64, reason string) error {
	return s.db.InTx(ctx, func(q *db.Queries) error {
		if _, err := trialFor(ctx, q, a, authz.Report, id); err != nil {
			return err
		}
		switch reason {
		case EarlyExitInvalidHP, "EXITED_REASON_USER_REQUESTED_STOP", "EXITED_REASON_UNSPECIFIED":
		default:
			return resolute.Errorf(resolute.EInvalid, "reason: unknown early exit reason %q", reason)
		}
		return q.SetTrialEarlyExit(ctx, id, reason)
	})
}

// ReportMetrics stores a trial's metrics report (a run id of 0
// is the trial's current run); the searcher hears of validation metrics,
// whose values it reads from values.
func (s *Trials) ReportMetrics(ctx context.Context, a authz.Actor, r resolute.MetricsReport, values map[string]any) error {
	// The trial and its owner do not change, so the check needs no lock;
	// the report is written by w's own transaction, batched with others.
	t, err := trialFor(ctx, &s.db.Queries, a, authz.Report, r.TrialID)
	if err != nil {
		return err
	}
	switch r.TrialRunID {
	case 0:
		r.TrialRunID = t.RunID
	case t.RunID:
	default: // an earlier run's reports are hidden by its restart; a later one does not exist
		return resolute.Errorf(resolute.EInvalid, "trial_run_id: trial %d is on run %d, not %d", t.ID, t.RunID, r.TrialRunID)
	}
	if err := s.metrics.Write(ctx, r); err != nil {
		return err
	}
	if r.Group == "training" && t.Progress == 0 && r.StepsCompleted > t.StepsCompleted {
		// A trial that reports no progress of its own is as far as its
		// batches over its target length.
		if err := s.db.InTx(ctx, func(q *db.Queries) error {
			return s.exps.trialProgressed(ctx, q, t, 0, r.StepsCompleted)
		}); err != nil {
			return err
		}
	}
	if r.Group == "validation" {
		return s.exps.ValidationReported(ctx, t.ID, r.TrialRunID, r.StepsCompleted, values)
	}
	return nil
}

// trialFor loads trial id for action act by a (act Report: only the
// trial's own allocation may).
func trialFor(ctx context.Context, q *db.Queries, a authz.Actor, act authz.Action, id int64) (resolute.Trial, error) {
	t, err := q.Trial(ctx, id)
	if err != nil {
		return t, err
	}
	e, err := q.Experiment(ctx, t.ExperimentID)
	if err != nil {
		return t, err
	}
	return t, authz.Can(a, act, authz.Trial(t, e))
}
