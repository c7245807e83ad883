package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// DefaultPreemptionTimeout is how long a trial asked to checkpoint and exit
// has before it is killed (Determined's cluster default).
const DefaultPreemptionTimeout = time.Hour

// Experiments is the experiment and trial state machine: it creates an
// experiment's trials as its searcher asks, changes experiments and trials
// for their owners (state actions, edits), hears validations, decides what
// a trial's ended allocation means for it, and collects checkpoint garbage.
// All state is in PostgreSQL; every change to one experiment happens under
// its row lock.
type Experiments struct {
	c       *core
	queue   *Queue // an experiment's scheduling edits are changes of the queue
	configs parsedConfigs
}

// run is one experiment loaded under its lock, with its searcher.
type run struct {
	id       int64
	state    string
	cfg      *expconf.ExperimentConfig // shared (parsedConfigs): read only
	s        *searcher.Searcher
	done     bool
	failed   bool
	restarts int
}

// lock loads an experiment and its searcher under the row lock.
func (x *Experiments) lock(ctx context.Context, q *db.Queries, id int64) (*run, error) {
	e, err := q.LockExperiment(ctx, id)
	if err != nil {
		return nil, err
	}
	cfg, err := x.configs.parse(id, e.Config)
	if err != nil {
		return nil, fmt.Errorf("stored config of experiment %d: %w", id, err)
	}
	s, err := searcher.Restore(cfg.Searcher, cfg.Hyperparameters, e.SearcherState)
	if err != nil {
		return nil, fmt.Errorf("searcher of experiment %d: %w", id, err)
	}
	return &run{id: id, state: e.State, cfg: cfg, s: s, done: e.SearcherDone, failed: e.SearcherFailed, restarts: e.Restarts}, nil
}

// apply carries out the searcher's actions and saves its state.
func (x *Experiments) apply(ctx context.Context, q *db.Queries, r *run, actions []searcher.Action) error {
	for _, a := range actions {
		switch a := a.(type) {
		case searcher.Create:
			hp, err := json.Marshal(a.Hparams)
			if err != nil {
				return err
			}
			trialState := resolute.StateActive
			if r.state != resolute.StateActive {
				trialState = resolute.StatePaused
			}
			t, err := q.CreateTrial(ctx, r.id, int(a.RequestID), trialState, hp, int64(a.TrialSeed))
			if err != nil {
				return err
			}
			if t.LatestCheckpoint, err = x.warmStart(ctx, q, r.cfg); err != nil {
				return err
			} else if t.LatestCheckpoint != "" {
				if err := q.SetTrialLatestCheckpoint(ctx, t.ID, t.LatestCheckpoint); err != nil {
					return err
				}
			}
			if trialState == resolute.StateActive {
				if err := x.queueTrial(ctx, q, t, r.cfg); err != nil {
					return err
				}
			}
		case searcher.Stop:
			t, err := q.TrialByRequest(ctx, r.id, int(a.RequestID))
			if err != nil {
				return err
			}
			if err := x.stopTrial(ctx, q, t, resolute.StateStoppingCompleted, r.cfg); err != nil {
				return err
			}
		case searcher.Shutdown:
			r.done, r.failed = true, a.Failure
		}
	}
	snap, err := r.s.Snapshot()
	if err != nil {
		return err
	}
	if err := q.SaveSearcher(ctx, r.id, snap, r.done, r.failed, r.s.Progress()); err != nil {
		return err
	}
	return x.settle(ctx, q, r)
}

// warmStart is the checkpoint new trials start from: the config's
// searcher.source_checkpoint_uuid, or the latest checkpoint of
// searcher.source_trial_id, as Determined's warm start.
func (x *Experiments) warmStart(ctx context.Context, q *db.Queries, cfg *expconf.ExperimentConfig) (string, error) {
	if id := cfg.Searcher.SourceCheckpointUUID; id != nil && *id != "" {
		if _, err := q.Checkpoint(ctx, *id); err != nil {
			return "", resolute.Errorf(resolute.EInvalid, "searcher.source_checkpoint_uuid: %s", resolute.ErrorMessage(err))
		}
		return *id, nil
	}
	if id := cfg.Searcher.SourceTrialID; id != nil {
		t, err := q.Trial(ctx, int64(*id))
		if err != nil {
			return "", resolute.Errorf(resolute.EInvalid, "searcher.source_trial_id: %s", resolute.ErrorMessage(err))
		}
		if t.LatestCheckpoint == "" {
			return "", resolute.Errorf(resolute.EInvalid, "searcher.source_trial_id: trial %d has no checkpoint", t.ID)
		}
		return t.LatestCheckpoint, nil
	}
	return "", nil
}

// queueTrial adds a pending allocation for the trial's next run. A run
// after the first restarts from the trial's latest checkpoint: the earlier
// runs' reports past it are hidden, and the best validations no longer
// count them.
func (x *Experiments) queueTrial(ctx context.Context, q *db.Queries, t resolute.Trial, cfg *expconf.ExperimentConfig) error {
	runID, err := q.StartTrialRun(ctx, t.ID)
	if err != nil {
		return err
	}
	if runID > 1 {
		hidden, err := q.HideMetricsPastRestart(ctx, t.ID, runID)
		if err != nil {
			return err
		}
		if hidden > 0 && cfg.Searcher.Metric != "" {
			if err := q.ResetBestValidation(ctx, t, cfg.Searcher.Metric, cfg.Searcher.SmallerIsBetter); err != nil {
				return err
			}
		}
	}
	return q.CreateAllocation(ctx, fmt.Sprintf("%s.%d", t.TaskID(), runID), t.TaskID(), &t.ID, cfg.Resources.SlotsPerTrial)
}

// stopTrial moves a trial towards state: a pending allocation is dropped
// (and the trial ends at once), a running one is asked to checkpoint and
// exit (STOPPING_*), or killed for STOPPING_KILLED.
func (x *Experiments) stopTrial(ctx context.Context, q *db.Queries, t resolute.Trial, stopping string, cfg *expconf.ExperimentConfig) error {
	if resolute.Terminal(t.State) {
		return nil
	}
	a, err := q.CurrentTrialAllocation(ctx, t.ID)
	if resolute.ErrorCode(err) == resolute.ENotFound || (err == nil && a.State == resolute.AllocationPending) {
		if err == nil {
			if _, err := q.EndAllocation(ctx, a.ID, nil, "stopped before it started"); err != nil {
				return err
			}
		}
		return q.SetTrialState(ctx, t.ID, finalState(stopping))
	} else if err != nil {
		return err
	}
	if err := q.SetTrialState(ctx, t.ID, stopping); err != nil {
		return err
	}
	if stopping == resolute.StateStoppingKilled {
		_, err = q.RequestPreemption(ctx, a.ID, x.c.now()) // killed by the next admission cycle
		return err
	}
	_, err = q.RequestPreemption(ctx, a.ID, x.c.now().Add(preemptionTimeout(cfg)))
	return err
}

func preemptionTimeout(cfg *expconf.ExperimentConfig) time.Duration {
	if cfg.PreemptionTimeout != nil {
		return time.Duration(*cfg.PreemptionTimeout) * time.Second
	}
	return DefaultPreemptionTimeout
}

// finalState is where a stopping state ends.
func finalState(stopping string) string {
	switch stopping {
	case resolute.StateStoppingCompleted:
		return resolute.StateCompleted
	case resolute.StateStoppingError:
		return resolute.StateError
	case resolute.StatePaused:
		return resolute.StatePaused
	}
	return resolute.StateCanceled
}

// settle finishes an experiment whose trials have all ended: COMPLETED when
// the searcher is done, ERROR when it failed, CANCELED when stopped.
func (x *Experiments) settle(ctx context.Context, q *db.Queries, r *run) error {
	trials, err := q.Trials(ctx, r.id)
	if err != nil {
		return err
	}
	for _, t := range trials {
		if !resolute.Terminal(t.State) && t.State != resolute.StatePaused {
			return nil
		}
	}
	next := ""
	switch {
	case r.state == resolute.StateStoppingCanceled || r.state == resolute.StateStoppingKilled:
		next = resolute.StateCanceled
	case r.state == resolute.StateStoppingError:
		next = resolute.StateError
	case (r.state == resolute.StateActive || r.state == resolute.StateStoppingCompleted) && r.done:
		next = resolute.StateCompleted
		if r.failed {
			next = resolute.StateError
		}
	}
	if next == "" {
		return nil
	}
	r.state = next
	x.c.logger.Info("experiment ended", "experiment", r.id, "state", next)
	return q.SetExperimentState(ctx, r.id, next)
}
