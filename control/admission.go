package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/scheduler"
)

// Admission is the admission loop: each cycle reads what waits and what
// runs, asks scheduler.Decide what to start and what to preempt, and does
// it on the resource manager. It also hands what the resource manager
// reports (Pump) to the experiments and tasks, and brings them back after a
// master restart (Recover). Its clock is the Runner's (WithClock).
type Admission struct {
	c     *core
	exps  *Experiments // launches trials, and hears how their allocations end
	tasks *Tasks       // launches tasks, and hears how their allocations end
}

// Run schedules until ctx ends: each cycle kills allocations past their
// preemption deadline, asks the scheduler what to start and preempt, and
// does it. A cycle that finds the database unavailable is tried again at
// the next tick, silently.
func (x *Admission) Run(ctx context.Context) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		start := time.Now()
		err := x.cycle(ctx)
		if err != nil && !quiet(ctx, err) {
			x.c.logger.Error("admission cycle", "err", err)
		}
		d := time.Since(start)
		if d > time.Second {
			x.c.logger.Warn("slow admission cycle", "took", d)
		}
		if x.c.observe != nil && err == nil {
			x.c.observe(CycleStats{Took: d, Pools: x.c.lastLoad()})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-x.c.wake:
		}
	}
}

// cycle is one admission pass, in four steps (the clock is x.c.now, so tests
// can move it):
//
//  1. Overdue: kill the allocations whose preemption deadline has passed
//     (set in step 4 of an earlier pass, or by a pause or a kill).
//  2. Snapshot: read the pools, their agents' slots (a disabled agent's
//     only as far as allocations hold them: nothing new lands there), and
//     every waiting and running allocation with its job's priority, weight
//     and place.
//  3. Decide: scheduler.Decide, a pure function of the snapshot, says what
//     to preempt and what to start; the decision is kept for the queue's
//     jobs ahead and waiting reasons (LastDecision).
//  4. Act: a preempted allocation gets its deadline (now plus its
//     experiment's preemption timeout) and a line in its task log; a start
//     is launched on the resource manager, launchParallelism at once, and a
//     launch that fails requeues the allocation or ends its run.
func (x *Admission) cycle(ctx context.Context) error {
	// 1. Overdue.
	overdue, err := x.c.db.OverdueAllocations(ctx, x.c.now())
	if err != nil {
		return err
	}
	for _, a := range overdue {
		x.c.logger.Info("killing allocation past its preemption deadline", "allocation", a.ID)
		if err := x.c.rm.Kill(ctx, a.ID, x.c.opts.KillGrace); err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
			x.c.logger.Error("kill", "allocation", a.ID, "err", err)
		}
	}
	// 2. Snapshot.
	snap, live, err := x.snapshot(ctx)
	if err != nil {
		return err
	}
	// 3. Decide.
	d := scheduler.Decide(snap)
	x.c.setLastDecision(d, loadOf(snap))
	// 4. Act. Launches go in parallel (a Kubernetes launch is a few API
	// calls that mostly wait); the pass ends when all are done.
	var wg sync.WaitGroup
	sem := make(chan struct{}, launchParallelism)
	defer wg.Wait()
	for _, act := range d.Actions {
		switch act := act.(type) {
		case scheduler.Preempt:
			a := live[act.AllocationID]
			x.c.logger.Info("preempting allocation", "allocation", a.ID, "reason", act.Reason)
			if _, err := x.c.db.RequestPreemption(ctx, a.ID, x.c.now().Add(x.preemptionTimeoutOf(ctx, a.ExperimentID))); err != nil {
				return err
			}
			x.c.taskLog(ctx, a.Allocation, "INFO", act.Reason+": checkpointing and giving the slots back")
		case scheduler.Start:
			a := live[act.AllocationID]
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if err := x.launch(ctx, a.Allocation, act.Slots, act.Avoid); err != nil {
					x.launchFailed(ctx, a.Allocation, err)
				}
			}()
		}
	}
	return nil
}

// launchParallelism is how many allocations a cycle launches at once.
const launchParallelism = 16

// launchFailed handles an allocation that could not start: a slot the
// resource manager still holds, or the database unavailable before the
// resource manager was asked, puts it back in the queue (once the database
// is back); anything else fails the run.
func (x *Admission) launchFailed(ctx context.Context, a resolute.Allocation, err error) {
	var refused launchError
	if !errors.As(err, &refused) && db.Unavailable(err) {
		if err := untilAvailable(ctx, func() error { return x.c.db.UnstartAllocation(ctx, a.ID) }); err != nil && !quiet(ctx, err) {
			x.c.logger.Error("requeue allocation", "allocation", a.ID, "err", err)
		}
		return
	}
	if resolute.ErrorCode(err) == resolute.EConflict {
		x.c.logger.Warn("slots still busy; the allocation waits", "allocation", a.ID, "err", err)
		if err := x.c.db.UnstartAllocation(ctx, a.ID); err != nil {
			x.c.logger.Error("requeue allocation", "allocation", a.ID, "err", err)
		}
		return
	}
	x.c.logger.Error("launch failed", "allocation", a.ID, "err", err)
	code := -1
	x.c.taskLog(ctx, a, "ERROR", "could not start: "+err.Error())
	if err := x.AllocationExited(ctx, a.ID, &code, "launch failed: "+err.Error()); err != nil {
		x.c.logger.Error("record failed launch", "allocation", a.ID, "err", err)
	}
}

// snapshot is what the scheduler decides on: the pools with their slots and
// every queued experiment with its waiting and running allocations.
func (x *Admission) snapshot(ctx context.Context) (scheduler.Snapshot, map[string]db.LiveAllocation, error) {
	snap := scheduler.Snapshot{Now: x.c.now()}
	allocs, err := x.c.db.LiveAllocations(ctx)
	if err != nil {
		return snap, nil, err
	}
	if snap.Pools, err = x.snapshotPools(ctx, allocs); err != nil {
		return snap, nil, err
	}
	exps, err := x.c.db.QueuedExperiments(ctx, "")
	if err != nil {
		return snap, nil, err
	}
	live := make(map[string]db.LiveAllocation, len(allocs))
	tasks := map[int64][]scheduler.Task{}
	for _, a := range allocs {
		live[a.ID] = a
		if a.TrialID != nil {
			tasks[a.ExperimentID] = append(tasks[a.ExperimentID], taskOfAllocation(a))
		}
	}
	live2 := true
	liveTasks, err := x.c.db.Tasks(ctx, db.TaskFilter{Live: &live2})
	if err != nil {
		return snap, nil, err
	}
	byTask := map[string][]scheduler.Task{}
	for _, a := range allocs {
		if a.TrialID == nil {
			byTask[a.TaskID] = append(byTask[a.TaskID], taskOfAllocation(a))
		}
	}
	for _, t := range liveTasks {
		job := scheduler.Job{ID: t.ID, Pool: t.ResourcePool, Weight: t.Weight, Position: t.QueuePosition,
			Submitted: t.CreatedAt, Tasks: byTask[t.ID]}
		if t.Priority != nil {
			job.Priority = *t.Priority
		}
		snap.Jobs = append(snap.Jobs, job)
	}
	for _, e := range exps {
		job := scheduler.Job{ID: JobID(e.ID), Pool: e.ResourcePool, Weight: e.Weight, Position: e.QueuePosition,
			Submitted: e.CreatedAt, Preemptible: true, Tasks: tasks[e.ID]}
		if e.Priority != nil {
			job.Priority = *e.Priority
		}
		if e.MaxSlots != nil {
			job.MaxSlots = *e.MaxSlots
		}
		snap.Jobs = append(snap.Jobs, job)
	}
	return snap, live, nil
}

// taskOfAllocation is what the scheduler sees of an allocation.
func taskOfAllocation(a db.LiveAllocation) scheduler.Task {
	t := scheduler.Task{AllocationID: a.ID, Slots: a.Slots, Running: a.State == resolute.AllocationRunning, Preempting: a.Preempt}
	if !t.Running {
		t.Avoid = a.ExcludedAgents // exclude_node log policies
	}
	for i, id := range a.SlotIDs {
		agent := unrecordedAgent
		if i < len(a.SlotAgents) {
			agent = a.SlotAgents[i]
		}
		t.Assigned = append(t.Assigned, scheduler.SlotRef{Agent: agent, Slot: id})
	}
	return t
}

// unrecordedAgent is the agent of the slots of an allocation that recorded
// none: one started before the agents of every resource manager were
// recorded, on the local one's machine.
const unrecordedAgent = "local"

// JobID names an experiment's job in the queue.
func JobID(experimentID int64) string { return "experiment-" + strconv.FormatInt(experimentID, 10) }

// LastDecision is the scheduler's latest decision: why jobs wait, and how
// many jobs are ahead of each.
func (x *Admission) LastDecision() scheduler.Decision { return x.c.lastDecision() }

// Wake asks the admission loop to look for work now.
func (x *Admission) Wake() { x.c.wakeAdmission() }

// preemptionTimeoutOf is an experiment's preemption_timeout.
func (x *Admission) preemptionTimeoutOf(ctx context.Context, experimentID int64) time.Duration {
	e, err := x.c.db.Experiment(ctx, experimentID)
	if err != nil {
		return DefaultPreemptionTimeout
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return DefaultPreemptionTimeout
	}
	return preemptionTimeout(cfg)
}

// launch starts a trial's allocation on the slots the scheduler chose.
func (x *Admission) launch(ctx context.Context, a resolute.Allocation, refs []scheduler.SlotRef, avoid []string) error {
	slots := make([]int, len(refs))
	agents := make([]string, len(refs))
	for i, r := range refs {
		slots[i], agents[i] = r.Slot, r.Agent
	}
	token, hash := newToken()
	started, err := x.c.db.StartAllocationOn(ctx, a.ID, slots, agents, hash)
	if err != nil || !started {
		return err
	}
	if a.TrialID == nil {
		return x.tasks.launch(ctx, a, slots, agents, avoid, token)
	}
	t, err := x.c.db.Trial(ctx, *a.TrialID)
	if err != nil {
		return err
	}
	e, err := x.c.db.Experiment(ctx, t.ExperimentID)
	if err != nil {
		return err
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return err
	}
	ws, err := x.c.db.WorkspaceSettings(ctx, e.WorkspaceID)
	if err != nil {
		return err
	}
	runAs, err := x.c.taskUser(ctx, e.UserID, ws)
	if err != nil {
		return err
	}
	runID := strings.TrimPrefix(a.ID, t.TaskID()+".")
	env := x.trialEnv(cfg, e, t, a, token, runID, len(slots) > 0)
	archive := &launchContext{open: func(ctx context.Context) io.Reader { return x.c.db.ExperimentContext(ctx, e.ID) }}
	// A Determined `module:Class` entrypoint runs through the harness's Trainer.
	command := cfg.Entrypoint.TrialCommand(cfg.Resources.SlotsPerTrial)
	spec := resolute.LaunchSpec{
		AllocationID: a.ID, TaskID: a.TaskID, Slots: slots, WorkDir: filepath.Join(x.c.opts.WorkRoot, a.ID),
		Context: archive.reader, Env: env, Shell: command.Shell, Entrypoint: command.Exec,
		SlotAgents: agents, AvoidAgents: avoid, TaskType: "TRIAL", User: e.Username, Pool: e.ResourcePool,
		Image:   imageFor(cfg.Environment.Image.CPU, cfg.Environment.Image.CUDA, len(slots) > 0),
		PodSpec: cfg.Environment.PodSpec, Priority: cfg.Resources.Priority,
		Mounts:       mountsOf(cfg.BindMounts, cfg.CheckpointStorage),
		RegistryAuth: registryAuth(cfg.Environment.RegistryAuth), ForcePullImage: cfg.Environment.ForcePullImage,
		RunAs: runAs, Namespace: ws.Namespace,
		Container: containerOf(cfg.Resources, cfg.Environment),
	}
	spec.StartupHook = resolute.RunsStartupHook(spec.TaskType)
	if t.LatestCheckpoint != "" {
		x.c.taskLog(ctx, a, "INFO", "resuming from checkpoint "+t.LatestCheckpoint)
	}
	return archive.launched(x.c.rm.Launch(ctx, spec))
}

// launchContext hands the resource manager an allocation's context as the
// database gives it, a chunk at a time, and remembers the database's
// error: a launch cut short by it while the context was read goes back to
// the queue (launchFailed) like one cut short before, rather than failing
// the run as a refusal of the resource manager does.
type launchContext struct {
	open func(context.Context) io.Reader
	err  error // the database's, while the resource manager read
}

// reader is LaunchSpec.Context.
func (c *launchContext) reader(ctx context.Context) io.Reader {
	return &recordErr{r: c.open(ctx), err: &c.err}
}

// launched marks err of the resource manager's Launch (launched), unless
// the database failed under it while it read the context: then it is the
// database's error.
func (c *launchContext) launched(err error) error {
	if err != nil && c.err != nil && db.Unavailable(c.err) {
		return c.err
	}
	return launched(err)
}

// recordErr is a reader that keeps its first error other than io.EOF.
type recordErr struct {
	r   io.Reader
	err *error
}

func (r *recordErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && *r.err == nil {
		*r.err = err
	}
	return n, err
}

// launchError is the resource manager's answer to Launch, told apart from
// the database's errors before it (launchFailed); it reads as the error.
type launchError struct{ err error }

func (e launchError) Error() string { return e.err.Error() }
func (e launchError) Unwrap() error { return e.err }

// launched marks an error of the resource manager's Launch.
func launched(err error) error {
	if err == nil {
		return nil
	}
	return launchError{err}
}

// trialEnv is the environment Determined gives a trial (inventory §2).
func (x *Admission) trialEnv(cfg *expconf.ExperimentConfig, e resolute.Experiment, t resolute.Trial, a resolute.Allocation, token, runID string, gpu bool) map[string]string {
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
		"DET_MASTER":            x.c.opts.MasterURL,
		"DET_MASTER_ADDR":       x.c.opts.MasterURL,
		"DET_CLUSTER_ID":        x.c.opts.ClusterID,
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
		"PYTHONUNBUFFERED":      "1",
	} {
		env[k] = v
	}
	if cfg.Debug {
		env["DET_DEBUG"] = "true"
	}
	return env
}

// mountsOf are a task's host directories: its bind_mounts, and shared_fs
// checkpoint storage at its own path (where the harness writes it).
func mountsOf(bms []expconf.BindMount, storage *expconf.CheckpointStorageConfig) []resolute.Mount {
	var out []resolute.Mount
	for _, bm := range bms {
		out = append(out, resolute.Mount{HostPath: bm.HostPath, ContainerPath: bm.ContainerPath, ReadOnly: bm.ReadOnly})
	}
	if storage != nil && storage.SharedFS != nil {
		if dir, err := storage.LocalDir(); err == nil {
			out = append(out, resolute.Mount{HostPath: dir, ContainerPath: dir})
		}
	}
	return out
}

// registryAuth is environment.registry_auth for the resource manager.
func registryAuth(a *expconf.RegistryAuth) *resolute.RegistryAuth {
	if a == nil {
		return nil
	}
	return &resolute.RegistryAuth{Username: a.Username, Password: a.Password, Auth: a.Auth, Email: a.Email, ServerAddress: a.ServerAddress}
}

// imageFor is environment.image for a task with or without GPUs.
func imageFor(cpu, cuda string, gpu bool) string {
	if gpu && cuda != "" {
		return cuda
	}
	return cpu
}

// Recover brings the experiments back after a master restart, from what
// the resource manager's Recover found: allocations that still run are kept;
// those that ended while no master ran end as they did, with the exit status
// they recorded; the others are put back in the queue to resume from their
// latest checkpoint, without counting as failures. Call it once, before Run
// and Pump.
func (x *Admission) Recover(ctx context.Context) error {
	found, err := x.c.rm.Recover(ctx)
	if err != nil {
		return fmt.Errorf("adopt running tasks: %w", err)
	}
	alive, ended := map[string]bool{}, map[string]int{}
	for _, f := range found {
		if f.Running {
			alive[f.AllocationID] = true
		} else {
			ended[f.AllocationID] = f.ExitCode
		}
	}
	running, err := x.c.db.RunningAllocations(ctx)
	if err != nil {
		return err
	}
	for _, a := range running {
		if alive[a.ID] {
			x.c.logger.Info("adopted allocation that survived the restart", "allocation", a.ID)
			continue
		}
		if code, ok := ended[a.ID]; ok {
			x.c.logger.Info("allocation ended while the master was down", "allocation", a.ID, "exit_code", code)
			x.c.taskLog(ctx, a, "INFO", fmt.Sprintf("the task exited with status %d while the master was down", code))
			if err := x.AllocationExited(ctx, a.ID, &code, "ended while the master was down"); err != nil {
				return err
			}
			continue
		}
		x.c.logger.Info("allocation lost in the restart; it will resume from its latest checkpoint", "allocation", a.ID)
		if _, err := x.c.db.RequestPreemption(ctx, a.ID, x.c.now()); err != nil {
			return err
		}
		// A trial resumes; a task ends with no exit status, so a checkpoint
		// GC task that may not have run deletes nothing from the database.
		var code *int
		if a.TrialID != nil {
			zero := 0
			code = &zero
			x.c.taskLog(ctx, a, "WARNING", "the master restarted while this allocation ran; the trial resumes from its latest checkpoint")
		} else {
			x.c.taskLog(ctx, a, "WARNING", "the master restarted while this task ran and lost it; the task ended")
		}
		if err := x.AllocationExited(ctx, a.ID, code, "lost in a master restart"); err != nil {
			return err
		}
	}
	x.c.wakeAdmission()
	return nil
}

// ShouldPreempt answers a task's preemption long-poll: whether it should checkpoint
// and exit now.
func (x *Admission) ShouldPreempt(ctx context.Context, allocationID string) (bool, error) {
	a, err := x.c.db.Allocation(ctx, allocationID)
	if err != nil {
		return false, err
	}
	return a.Preempt, nil
}
