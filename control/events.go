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
	t, err := x.c.db.Trial(ctx, trialID)
	if err != nil {
		return err
	}
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
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
		x.c.wakeAdmission()
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

// allocationExited turns the end of a trial's allocation into the next
// state of its trial: completed, paused, canceled, restarted from its latest
// checkpoint (while the experiment's max_restarts lasts), or errored; the
// searcher hears of trials that ended. A nil exitCode means the status is
// unknown.
func (x *Experiments) allocationExited(ctx context.Context, a resolute.Allocation, exitCode *int, reason string) error {
	if exitCode == nil {
		// Its exit status is lost (adopted after a restart): run it again
		// from its latest checkpoint, as after a preemption.
		a.Preempt = true
	}
	t, err := x.c.db.Trial(ctx, *a.TrialID)
	if err != nil {
		return err
	}
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
		r, err := x.lock(ctx, q, t.ExperimentID)
		if err != nil {
			return err
		}
		ended, err := q.EndAllocation(ctx, a.ID, exitCode, reason)
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
	x.c.wakeAdmission()
	if err := x.CollectGarbage(ctx, t.ExperimentID); err != nil && !quiet(ctx, err) {
		x.c.logger.Error("checkpoint garbage collection", "experiment", t.ExperimentID, "err", err)
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
	n := r.restarts
	if !t.RetriesCancelled {
		var err error
		if n, err = q.AddExperimentRestart(ctx, r.id); err != nil {
			return err
		}
	}
	pool, err := x.c.poolFor(r.cfg.Resources.ResourcePool)
	if err != nil {
		pool = r.cfg.Resources.ResourcePool
	}
	retry, why := decideRetry(retryFacts{Active: r.state == resolute.StateActive, Restarts: n, MaxRestarts: r.cfg.MaxRestarts,
		RetriesCancelled: t.RetriesCancelled, Policy: t.LogPolicyMatched, Excluded: t.ExcludedAgents,
		PoolAgents: agentIDs(x.c.rm.Agents(pool)), Pool: pool})
	if retry {
		x.c.logger.Info("trial failed; restarting from its latest checkpoint", "trial", t.ID, "restart", n, "max_restarts", r.cfg.MaxRestarts)
		if err := q.AddTrialRestart(ctx, t.ID); err != nil {
			return err
		}
		return x.queueTrial(ctx, q, t, r.cfg)
	}
	if why != "" {
		x.c.taskLog(ctx, a, "ERROR", why)
	}
	x.c.logger.Info("trial errored", "trial", t.ID, "restarts", n-1, "max_restarts", r.cfg.MaxRestarts, "log_policy", why)
	return exited(resolute.StateError, searcher.ExitErrored)
}

func agentIDs(agents []resolute.Agent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	return out
}
