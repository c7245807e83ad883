package control

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
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
// does not keep: a CHECKPOINT_GC task deletes their files where tasks run,
// and they are marked deleted when it succeeds (as Determined's). It runs
// when a trial ends; the latest checkpoint of every trial that may resume,
// and every registered one, is always kept.
func (x *Experiments) CollectGarbage(ctx context.Context, experimentID int64) error {
	e, err := x.c.db.Experiment(ctx, experimentID)
	if err != nil {
		return err
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return err
	}
	st := cfg.CheckpointStorage
	cps, err := x.c.db.ExperimentCheckpoints(ctx, experimentID)
	if err != nil {
		return err
	}
	trials, err := x.c.db.Trials(ctx, experimentID)
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
	registered, err := x.c.db.CheckpointRegistrations(ctx, uuids)
	if err != nil {
		return err
	}
	for uuid := range registered {
		keep[uuid] = true
	}
	scored := make([]ScoredCheckpoint, len(cps))
	for i, c := range cps {
		scored[i] = ScoredCheckpoint{Checkpoint: c}
		v, err := x.c.db.ValidationAtStep(ctx, c.TrialID, c.StepsCompleted)
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
	doomed := CheckpointsToDelete(scored, policy, keep)
	return x.startCheckpointGC(ctx, e, st, doomed)
}

// startCheckpointGC queues a CHECKPOINT_GC task (gcTaskConfig) that
// deletes the files of uuids where tasks run (on Kubernetes a pod made from
// checkpoint_gc_pod_spec). Checkpoints another such task holds are left to
// it; checkpointGCEnded marks them deleted once it exits 0.
func (x *Experiments) startCheckpointGC(ctx context.Context, e resolute.Experiment, st *expconf.CheckpointStorageConfig, uuids []string) error {
	if len(uuids) == 0 {
		return nil
	}
	held, err := x.c.db.CheckpointsBeingCollected(ctx, uuids)
	if err != nil {
		return err
	}
	var uncollected []string
	for _, u := range uuids {
		if !held[u] {
			uncollected = append(uncollected, u)
		}
	}
	if len(uncollected) == 0 {
		return nil
	}
	var id string
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
		// A checkpoint registered as a model version since the policy chose
		// it stays: registering locks it too, so one of the two sees the other.
		if uncollected, err = unregistered(ctx, q, uncollected); err != nil || len(uncollected) == 0 {
			return err
		}
		id, err = queueCheckpointGC(ctx, q, x.c.opts.AuxPool, e, st, uncollected)
		return err
	})
	if err != nil || id == "" {
		return err
	}
	x.c.logger.Info("checkpoint GC task queued", "task", id, "experiment", e.ID, "checkpoints", len(uncollected))
	x.c.wakeAdmission()
	return nil
}

// queueCheckpointGC creates, in q's transaction, a CHECKPOINT_GC task of
// experiment e that deletes uuids from st, and its allocation.
func queueCheckpointGC(ctx context.Context, q *db.Queries, pool string, e resolute.Experiment, st *expconf.CheckpointStorageConfig, uuids []string) (string, error) {
	config, err := gcTaskConfig(e, st, uuids)
	if err != nil {
		return "", err
	}
	id, err := q.CreateTask(ctx, db.NewTask{Type: resolute.TaskCheckpointGC, Description: fmt.Sprintf("Checkpoint GC of experiment %d", e.ID),
		Config: config, UserID: e.UserID, ProjectID: e.ProjectID, ResourcePool: pool, ExperimentIDs: []int64{e.ID}})
	if err != nil {
		return "", err
	}
	if err := q.AddCheckpointGC(ctx, id, uuids); err != nil {
		return "", err
	}
	return id, q.CreateAllocation(ctx, id+".1", id, nil, 0)
}

// checkpointGCEnded marks a CHECKPOINT_GC task's checkpoints deleted, in the
// transaction that ends the task, when it exited 0; otherwise (a failure, or
// no status after a master restart) they stay, for the next collection of
// the experiment to try again.
func checkpointGCEnded(ctx context.Context, q *db.Queries, logger *slog.Logger, taskID string, exitCode *int) error {
	uuids, err := q.TaskCheckpointGC(ctx, taskID)
	if err != nil {
		return err
	}
	if exitCode == nil || *exitCode != 0 {
		logger.Warn("checkpoint GC task failed; its checkpoints stay until the next collection", "task", taskID, "checkpoints", len(uuids))
		return nil
	}
	for _, uuid := range uuids {
		if err := q.SetCheckpointDeleted(ctx, uuid); err != nil {
			return err
		}
		logger.Info("deleted checkpoint by the GC policy", "uuid", uuid, "task", taskID)
	}
	return nil
}

// unregistered locks the checkpoints uuids and returns those that are no
// model version.
func unregistered(ctx context.Context, q *db.Queries, uuids []string) ([]string, error) {
	for _, u := range uuids {
		if _, err := q.CheckpointForUpdate(ctx, u); err != nil {
			return nil, err
		}
	}
	reg, err := q.CheckpointRegistrations(ctx, uuids)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range uuids {
		if _, ok := reg[u]; !ok {
			out = append(out, u)
		}
	}
	return out, nil
}
