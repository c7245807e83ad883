package control

import (
	"context"
	"math"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// TrialFraction is how far a trial is through its training, from 0 to 1: the
// progress it reported itself, or, for a trial that reports none, the
// batches it trained over its target length (a max_length in batches). A
// trial that reported both counts the larger: a report lags its batches.
func TrialFraction(reported float64, batches int64, target *expconf.Length) float64 {
	f := reported
	if target != nil && target.Units > 0 && (target.Unit == expconf.UnitBatches || target.Unit == "") {
		f = max(f, float64(batches)/float64(target.Units))
	}
	if math.IsNaN(f) {
		return 0
	}
	return min(max(f, 0), 1)
}

// trialProgressed tells the trial's experiment's searcher how far the
// trial is and saves the experiment's progress, as Determined's experiment
// does on each of its trials' progress reports: the searcher weighs it
// (single, random and grid average over their trials; ASHA counts rungs).
// The experiment's row lock is taken before the trial's row is written,
// the order every other change of an experiment takes.
func (x *Experiments) trialProgressed(ctx context.Context, q *db.Queries, t resolute.Trial, reported float64, batches int64) error {
	r, err := x.lock(ctx, q, t.ExperimentID)
	if err != nil {
		return err
	}
	if reported != t.Progress {
		if err := q.SetTrialProgress(ctx, t.ID, reported); err != nil {
			return err
		}
	}
	f := TrialFraction(reported, batches, r.cfg.Searcher.MaxLength)
	if r.done || resolute.Terminal(t.State) || f == 0 {
		return nil // the searcher is done with it, or there is nothing to tell
	}
	if err := r.s.ReportProgress(searcher.RequestID(t.RequestID), f); err != nil {
		return err
	}
	snap, err := r.s.Snapshot()
	if err != nil {
		return err
	}
	return q.SaveSearcher(ctx, r.id, snap, r.done, r.failed, r.s.Progress())
}
