package control

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// Run admits pending allocations to free slots, first come first served,
// and kills allocations past their preemption deadline, until ctx ends. It
// is the simple admission the scheduler will replace.
func (x *Experiments) Run(ctx context.Context) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		start := time.Now()
		if err := x.cycle(ctx); err != nil && ctx.Err() == nil {
			x.logger.Error("admission cycle", "err", err)
		}
		if d := time.Since(start); d > time.Second {
			x.logger.Warn("slow admission cycle", "took", d)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-x.wake:
		}
	}
}

// cycle is one pass: kill what is overdue, then start what fits.
func (x *Experiments) cycle(ctx context.Context) error {
	overdue, err := x.db.OverdueAllocations(ctx)
	if err != nil {
		return err
	}
	for _, a := range overdue {
		x.logger.Info("killing allocation past its preemption deadline", "allocation", a.ID)
		if err := x.rm.Kill(ctx, a.ID, x.opts.KillGrace); err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
			x.logger.Error("kill", "allocation", a.ID, "err", err)
		}
	}
	pending, err := x.db.PendingAllocations(ctx)
	if err != nil {
		return err
	}
	free := x.rm.FreeSlots()
	total := x.rm.TotalSlots()
	for _, a := range pending {
		if a.Slots > total {
			continue // can never fit here; the scheduler will say why
		}
		if a.Slots > len(free) {
			break // first come, first served: nothing jumps the queue
		}
		slots := free[:a.Slots]
		free = free[a.Slots:]
		if err := x.launch(ctx, a, slots); err != nil {
			x.logger.Error("launch failed", "allocation", a.ID, "err", err)
			code := -1
			x.taskLog(ctx, a, "ERROR", "could not start: "+err.Error())
			if err := x.AllocationExited(ctx, a.ID, &code, "launch failed: "+err.Error()); err != nil {
				x.logger.Error("record failed launch", "allocation", a.ID, "err", err)
			}
		}
	}
	return nil
}

// launch starts a trial's allocation on slots.
func (x *Experiments) launch(ctx context.Context, a resolute.Allocation, slots []int) error {
	token, hash := newToken()
	started, err := x.db.StartAllocation(ctx, a.ID, slots, hash)
	if err != nil || !started {
		return err
	}
	if a.TrialID == nil {
		return fmt.Errorf("allocation %s has no trial", a.ID)
	}
	t, err := x.db.Trial(ctx, *a.TrialID)
	if err != nil {
		return err
	}
	e, err := x.db.Experiment(ctx, t.ExperimentID)
	if err != nil {
		return err
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return err
	}
	tgz, err := x.db.ExperimentContext(ctx, e.ID)
	if err != nil {
		return err
	}
	runID := strings.TrimPrefix(a.ID, t.TaskID()+".")
	env := x.trialEnv(cfg, e, t, a, token, runID, len(slots) > 0)
	spec := resolute.LaunchSpec{
		AllocationID: a.ID, TaskID: a.TaskID, Slots: slots, WorkDir: filepath.Join(x.opts.WorkRoot, a.ID),
		ContextTarGz: tgz, Env: env, PythonPath: []string{x.opts.HarnessDir},
		Shell: cfg.Entrypoint.Shell, Entrypoint: cfg.Entrypoint.Exec,
	}
	if img := cfg.Environment.Image.CPU; img != "" {
		x.taskLog(ctx, a, "INFO", fmt.Sprintf("the local resource manager runs tasks without containers: environment.image %q is recorded but not used", img))
	}
	if t.LatestCheckpoint != "" {
		x.taskLog(ctx, a, "INFO", "resuming from checkpoint "+t.LatestCheckpoint)
	}
	return x.rm.Launch(ctx, spec)
}

// trialEnv is the environment Determined gives a trial (inventory §2).
func (x *Experiments) trialEnv(cfg *expconf.ExperimentConfig, e resolute.Experiment, t resolute.Trial, a resolute.Allocation, token, runID string, gpu bool) map[string]string {
	env := map[string]string{}
	vars := cfg.Environment.EnvironmentVariables.CPU
	if gpu && len(cfg.Environment.EnvironmentVariables.CUDA) > 0 {
		vars = cfg.Environment.EnvironmentVariables.CUDA
	}
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	hparams := string(t.Hparams)
	config := string(e.Config)
	for k, v := range map[string]string{
		"DET_MASTER":            x.opts.MasterURL,
		"DET_MASTER_ADDR":       x.opts.MasterURL,
		"DET_CLUSTER_ID":        x.opts.ClusterID,
		"DET_TASK_ID":           a.TaskID,
		"DET_ALLOCATION_ID":     a.ID,
		"DET_RESOURCES_ID":      a.ID,
		"DET_CONTAINER_ID":      a.ID,
		"DET_SESSION_TOKEN":     token,
		"DET_USER":              e.Username,
		"DET_TASK_TYPE":         "TRIAL",
		"DET_EXPERIMENT_ID":     strconv.FormatInt(e.ID, 10),
		"DET_TRIAL_ID":          strconv.FormatInt(t.ID, 10),
		"DET_TRIAL_RUN_ID":      runID,
		"DET_TRIAL_SEED":        strconv.FormatInt(t.Seed, 10),
		"DET_HPARAMS":           hparams,
		"DET_EXPERIMENT_CONFIG": config,
		"DET_STEPS_COMPLETED":   strconv.FormatInt(t.StepsCompleted, 10),
		"DET_LATEST_CHECKPOINT": t.LatestCheckpoint,
		"DET_RESOURCES_TYPE":    "process",
		"PYTHONUNBUFFERED":      "1",
	} {
		env[k] = v
	}
	if _, set := env["DET_PYTHON_EXECUTABLE"]; !set && x.opts.Python != "" {
		env["DET_PYTHON_EXECUTABLE"] = x.opts.Python
	}
	if x.opts.BinDir != "" {
		env["PATH"] = x.opts.BinDir + ":" + cmpOr(env["PATH"], "/usr/local/bin:/usr/bin:/bin")
	}
	if cfg.Debug {
		env["DET_DEBUG"] = "true"
	}
	return env
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// taskLog records a line of the master's own in a task's log.
func (x *Experiments) taskLog(ctx context.Context, a resolute.Allocation, level, msg string) {
	err := x.db.InsertTaskLogs(ctx, []resolute.TaskLog{{TaskID: a.TaskID, AllocationID: a.ID, Time: x.now(),
		Level: level, Source: "master", Log: msg}})
	if err != nil {
		x.logger.Error("task log", "allocation", a.ID, "err", err)
	}
}

// Recover brings the experiments back after a master restart: allocations
// that still run (alive) are kept; those that ended while no master ran
// (ended, with the exit status they recorded) end as they did; the others
// are put back in the queue to resume from their latest checkpoint, without
// counting as failures.
func (x *Experiments) Recover(ctx context.Context, alive map[string]bool, ended map[string]int) error {
	running, err := x.db.RunningAllocations(ctx)
	if err != nil {
		return err
	}
	for _, a := range running {
		if alive[a.ID] {
			x.logger.Info("adopted allocation that survived the restart", "allocation", a.ID)
			continue
		}
		if code, ok := ended[a.ID]; ok {
			x.logger.Info("allocation ended while the master was down", "allocation", a.ID, "exit_code", code)
			x.taskLog(ctx, a, "INFO", fmt.Sprintf("the task exited with status %d while the master was down", code))
			if err := x.AllocationExited(ctx, a.ID, &code, "ended while the master was down"); err != nil {
				return err
			}
			continue
		}
		x.logger.Info("allocation lost in the restart; it will resume from its latest checkpoint", "allocation", a.ID)
		if _, err := x.db.RequestPreemption(ctx, a.ID, x.now()); err != nil {
			return err
		}
		x.taskLog(ctx, a, "WARNING", "the master restarted while this allocation ran; the trial resumes from its latest checkpoint")
		zero := 0
		if err := x.AllocationExited(ctx, a.ID, &zero, "lost in a master restart"); err != nil {
			return err
		}
	}
	x.Wake()
	return nil
}

// ShouldPreempt answers a task's preemption long-poll: whether it should checkpoint
// and exit now.
func (x *Experiments) ShouldPreempt(ctx context.Context, allocationID string) (bool, error) {
	a, err := x.db.Allocation(ctx, allocationID)
	if err != nil {
		return false, err
	}
	return a.Preempt, nil
}
