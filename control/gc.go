package control

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// GCPolicy is checkpoint_storage's save_experiment_best, save_trial_best and
// save_trial_latest.
type GCPolicy struct {
	ExperimentBest  int
	TrialBest       int
	TrialLatest     int
	SmallerIsBetter bool
}

// ScoredCheckpoint is a checkpoint with the searcher metric of the
// validation at its step, when there was one.
type ScoredCheckpoint struct {
	resolute.Checkpoint
	Score  float64
	Scored bool
}

// CheckpointsToDelete is the pure rule of checkpoint garbage collection: a
// checkpoint stays when it is among the experiment's best, its trial's best
// or its trial's latest (each as many as the policy says), or when it is in
// keep (the latest checkpoint of a trial that may still resume).
func CheckpointsToDelete(cps []ScoredCheckpoint, p GCPolicy, keep map[string]bool) []string {
	kept := map[string]bool{}
	for k := range keep {
		kept[k] = true
	}
	better := func(a, b ScoredCheckpoint) bool {
		if a.Score != b.Score {
			if p.SmallerIsBetter {
				return a.Score < b.Score
			}
			return a.Score > b.Score
		}
		return a.StepsCompleted > b.StepsCompleted
	}
	var scored []ScoredCheckpoint
	byTrial := map[int64][]ScoredCheckpoint{}
	for _, c := range cps {
		byTrial[c.TrialID] = append(byTrial[c.TrialID], c)
		if c.Scored {
			scored = append(scored, c)
		}
	}
	sort.SliceStable(scored, func(i, j int) bool { return better(scored[i], scored[j]) })
	for i := 0; i < len(scored) && i < p.ExperimentBest; i++ {
		kept[scored[i].UUID] = true
	}
	for _, list := range byTrial {
		var best []ScoredCheckpoint
		for _, c := range list {
			if c.Scored {
				best = append(best, c)
			}
		}
		sort.SliceStable(best, func(i, j int) bool { return better(best[i], best[j]) })
		for i := 0; i < len(best) && i < p.TrialBest; i++ {
			kept[best[i].UUID] = true
		}
		latest := append([]ScoredCheckpoint(nil), list...)
		sort.SliceStable(latest, func(i, j int) bool { return latest[i].StepsCompleted > latest[j].StepsCompleted })
		for i := 0; i < len(latest) && i < p.TrialLatest; i++ {
			kept[latest[i].UUID] = true
		}
	}
	var out []string
	for _, c := range cps {
		if !kept[c.UUID] {
			out = append(out, c.UUID)
		}
	}
	sort.Strings(out)
	return out
}

// CollectGarbage deletes the checkpoints of an experiment that its policy
// does not keep, from storage on this machine and in the database. It runs
// when a trial ends; the latest checkpoint of every trial that may resume is
// always kept.
func (x *Experiments) CollectGarbage(ctx context.Context, experimentID int64) error {
	e, err := x.db.Experiment(ctx, experimentID)
	if err != nil {
		return err
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return err
	}
	st := cfg.CheckpointStorage
	dir, err := st.LocalDir()
	if err != nil {
		return nil // cloud storage: the harness deletes there (not yet)
	}
	cps, err := x.db.ExperimentCheckpoints(ctx, experimentID)
	if err != nil {
		return err
	}
	trials, err := x.db.Trials(ctx, experimentID)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, t := range trials {
		if !resolute.Terminal(t.State) && t.LatestCheckpoint != "" {
			keep[t.LatestCheckpoint] = true
		}
	}
	// A checkpoint registered in the model registry is never collected.
	uuids := make([]string, len(cps))
	for i, c := range cps {
		uuids[i] = c.UUID
	}
	registered, err := x.db.RegisteredCheckpoints(ctx, uuids)
	if err != nil {
		return err
	}
	for uuid := range registered {
		keep[uuid] = true
	}
	scored := make([]ScoredCheckpoint, len(cps))
	for i, c := range cps {
		scored[i] = ScoredCheckpoint{Checkpoint: c}
		v, err := x.db.ValidationAtStep(ctx, c.TrialID, c.StepsCompleted)
		if err != nil {
			return err
		}
		var m struct {
			Avg map[string]any `json:"avg_metrics"`
		}
		if v != nil && json.Unmarshal(v, &m) == nil {
			scored[i].Score, scored[i].Scored = number(m.Avg[cfg.Searcher.Metric])
		}
	}
	policy := GCPolicy{ExperimentBest: st.SaveExperimentBest, TrialBest: st.SaveTrialBest, TrialLatest: st.SaveTrialLatest,
		SmallerIsBetter: cfg.Searcher.SmallerIsBetter}
	for _, uuid := range CheckpointsToDelete(scored, policy, keep) {
		if err := os.RemoveAll(filepath.Join(dir, uuid)); err != nil {
			x.logger.Error("delete checkpoint files", "uuid", uuid, "err", err)
			continue
		}
		if err := x.db.SetCheckpointDeleted(ctx, uuid); err != nil {
			return err
		}
		x.logger.Info("deleted checkpoint by the GC policy", "uuid", uuid, "experiment", experimentID)
	}
	return nil
}
