package control

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
)

// Queue lists the jobs of a pool ("" for all) in queue order, with what the
// scheduler last said of them.
func (x *Experiments) Queue(ctx context.Context, pool string) ([]resolute.Job, error) {
	exps, err := x.db.QueuedExperiments(ctx, pool)
	if err != nil {
		return nil, err
	}
	allocs, err := x.db.LiveAllocations(ctx)
	if err != nil {
		return nil, err
	}
	type use struct{ requested, allocated, running int }
	uses := map[int64]*use{}
	pendingOf := map[int64]string{}
	for _, a := range allocs {
		u := uses[a.ExperimentID]
		if u == nil {
			u = &use{}
			uses[a.ExperimentID] = u
		}
		u.requested += a.Slots
		if a.State == resolute.AllocationRunning {
			u.allocated += a.Slots
			u.running++
		} else if pendingOf[a.ExperimentID] == "" {
			pendingOf[a.ExperimentID] = a.ID
		}
	}
	d := x.LastDecision()
	out := make([]resolute.Job, 0, len(exps))
	for _, e := range exps {
		u := uses[e.ID]
		if u == nil {
			u = &use{}
		}
		j := resolute.Job{JobID: JobID(e.ID), Type: "EXPERIMENT", EntityID: strconv.FormatInt(e.ID, 10), Name: e.Name,
			Username: e.Username, State: "QUEUED", Priority: x.effectivePriority(e), Weight: e.Weight, ResourcePool: e.ResourcePool,
			IsPreemptible: true, RequestedSlots: u.requested, AllocatedSlots: u.allocated, QueuePosition: e.QueuePosition,
			JobsAhead: d.JobsAhead[JobID(e.ID)], SubmissionTime: e.CreatedAt}
		if u.running > 0 {
			j.State = "SCHEDULED"
		}
		if p := pendingOf[e.ID]; p != "" {
			j.Reason = d.Waiting[p]
		}
		out = append(out, j)
	}
	tasks, err := x.taskJobs(ctx, pool, allocs, d)
	if err != nil {
		return nil, err
	}
	out = append(out, tasks...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].ResourcePool != out[j].ResourcePool {
			return out[i].ResourcePool < out[j].ResourcePool
		}
		return out[i].QueuePosition < out[j].QueuePosition
	})
	return out, nil
}

// taskJobs are the queue entries of live commands, notebooks, shells and
// TensorBoards (not preemptible).
func (x *Experiments) taskJobs(ctx context.Context, pool string, allocs []db.LiveAllocation, d scheduler.Decision) ([]resolute.Job, error) {
	live := true
	tasks, err := x.db.Tasks(ctx, db.TaskFilter{Live: &live})
	if err != nil {
		return nil, err
	}
	var out []resolute.Job
	for _, t := range tasks {
		if pool != "" && t.ResourcePool != pool {
			continue
		}
		j := resolute.Job{JobID: t.ID, Type: t.Type, EntityID: t.ID, Name: t.Description, Username: t.Username,
			State: "QUEUED", Priority: x.effectivePriority(resolute.Experiment{Priority: t.Priority, ResourcePool: t.ResourcePool}),
			Weight: t.Weight, ResourcePool: t.ResourcePool, RequestedSlots: t.Slots, QueuePosition: float64(t.CreatedAt.UnixMicro()),
			JobsAhead: d.JobsAhead[t.ID], SubmissionTime: t.CreatedAt}
		for _, a := range allocs {
			if a.TaskID != t.ID {
				continue
			}
			if a.State == resolute.AllocationRunning {
				j.State, j.AllocatedSlots = "SCHEDULED", a.Slots
			} else {
				j.Reason = d.Waiting[a.ID]
			}
		}
		out = append(out, j)
	}
	return out, nil
}

func (x *Experiments) effectivePriority(e resolute.Experiment) int {
	if e.Priority != nil {
		return *e.Priority
	}
	for _, p := range x.opts.Pools {
		if p.Name == e.ResourcePool {
			return p.Scheduler.DefaultPriority
		}
	}
	return 42
}

// experimentOfJob reads an experiment job id.
func experimentOfJob(jobID string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(jobID, "experiment-"), 10, 64)
	if err != nil || !strings.HasPrefix(jobID, "experiment-") {
		return 0, resolute.Errorf(resolute.EInvalid, "jobId: %q is not a job of this master (experiment-N)", jobID)
	}
	return id, nil
}

// UpdateQueue applies changes to the queue in one transaction: priority
// (1-99), weight (> 0), resource pool, or a move ahead of or behind another
// job of the same pool. Moving next to a job of another priority takes that
// job's priority, as Determined did. A pool's queue is locked while it is
// reordered, so concurrent moves apply one after another.
func (x *Experiments) UpdateQueue(ctx context.Context, updates []resolute.QueueControl) error {
	err := x.db.InTx(ctx, func(q *db.Queries) error {
		for _, u := range updates {
			if err := x.updateOne(ctx, q, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		x.Wake()
	}
	return err
}

func (x *Experiments) updateOne(ctx context.Context, q *db.Queries, u resolute.QueueControl) error {
	if !strings.HasPrefix(u.JobID, "experiment-") {
		return x.updateTaskJob(ctx, q, u)
	}
	id, err := experimentOfJob(u.JobID)
	if err != nil {
		return err
	}
	e, err := q.Experiment(ctx, id)
	if err != nil {
		return err
	}
	if resolute.Terminal(e.State) {
		return resolute.Errorf(resolute.EInvalid, "%s is %s; only queued or running jobs can be changed", u.JobID, e.State)
	}
	// Every change takes the pool's queue lock first, always in the same
	// order, so concurrent updates wait for each other instead of deadlocking.
	queue, err := q.LockPoolQueue(ctx, e.ResourcePool)
	if err != nil {
		return err
	}
	priority, weight, pool := e.Priority, e.Weight, e.ResourcePool
	if u.Priority != nil {
		if *u.Priority < 1 || *u.Priority > 99 {
			return resolute.Errorf(resolute.EInvalid, "priority: must be between 1 and 99, got %d", *u.Priority)
		}
		priority = u.Priority
	}
	if u.Weight != nil {
		if *u.Weight <= 0 {
			return resolute.Errorf(resolute.EInvalid, "weight: must be more than 0, got %v", *u.Weight)
		}
		weight = *u.Weight
	}
	if u.ResourcePool != nil {
		if pool, err = x.poolFor(*u.ResourcePool); err != nil {
			return resolute.Errorf(resolute.EInvalid, "resourcePool: %s", strings.TrimPrefix(resolute.ErrorMessage(err), "resources.resource_pool: "))
		}
	}
	if u.AheadOf != "" && u.BehindOf != "" {
		return resolute.Errorf(resolute.EInvalid, "aheadOf and behindOf: give one")
	}
	if target := u.AheadOf + u.BehindOf; target != "" {
		tid, err := experimentOfJob(target)
		if err != nil {
			return err
		}
		if tid == id {
			return resolute.Errorf(resolute.EInvalid, "a job cannot move next to itself")
		}
		t, err := q.Experiment(ctx, tid)
		if err != nil {
			return err
		}
		if resolute.Terminal(t.State) {
			return resolute.Errorf(resolute.EInvalid, "%s is %s; jobs can only move next to queued or running jobs", target, t.State)
		}
		if t.ResourcePool != pool {
			return resolute.Errorf(resolute.EInvalid, "%s is in pool %q and %s in %q; a job moves only within its pool", target, t.ResourcePool, u.JobID, pool)
		}
		if err := moveInQueue(ctx, q, queue, id, tid, u.AheadOf != ""); err != nil {
			if resolute.ErrorCode(err) == resolute.ENotFound {
				return resolute.Errorf(resolute.EInvalid, "%s is not in the queue of pool %q", target, pool)
			}
			return err
		}
		tp := x.effectivePriority(t)
		if ep := x.effectivePriority(resolute.Experiment{Priority: priority, ResourcePool: pool}); ep != tp {
			priority = &tp
		}
	}
	return q.SetExperimentScheduling(ctx, id, priority, weight, pool)
}

// moveInQueue puts moving just ahead of (or behind) target. Usually one row
// changes: the new position lies between the neighbours. When there is no
// room left between them (equal or adjacent floats), the pool's queue is
// renumbered in its new order.
func moveInQueue(ctx context.Context, q *db.Queries, queue []db.QueueEntry, moving, target int64, ahead bool) error {
	pos, ok := between(queue, moving, target, ahead)
	if !ok {
		return resolute.Errorf(resolute.ENotFound, "job not in the queue")
	}
	crowded := false
	for _, e := range queue {
		if e.ID != moving && e.Position == pos {
			crowded = true
		}
	}
	if !crowded {
		return q.SetQueuePosition(ctx, moving, pos)
	}
	var order []int64
	for _, e := range queue {
		switch {
		case e.ID == moving:
			continue
		case e.ID == target && ahead:
			order = append(order, moving, e.ID)
		case e.ID == target:
			order = append(order, e.ID, moving)
		default:
			order = append(order, e.ID)
		}
	}
	base := queue[0].Position
	for i, id := range order {
		if err := q.SetQueuePosition(ctx, id, base+float64(i)*1024); err != nil {
			return err
		}
	}
	return nil
}

// between is the position just ahead of (or behind) target in queue,
// ignoring the moving job itself.
func between(queue []db.QueueEntry, moving, target int64, ahead bool) (float64, bool) {
	var rest []db.QueueEntry
	for _, e := range queue {
		if e.ID != moving {
			rest = append(rest, e)
		}
	}
	for i, e := range rest {
		if e.ID != target {
			continue
		}
		if ahead {
			if i == 0 {
				return e.Position - 1, true
			}
			return (rest[i-1].Position + e.Position) / 2, true
		}
		if i == len(rest)-1 {
			return e.Position + 1, true
		}
		return (e.Position + rest[i+1].Position) / 2, true
	}
	return 0, false
}

// SlotInfo describes the resource manager's slots, for the cluster view.
type SlotInfo interface {
	// SlotsInfo lists every slot: id, type (cpu, cuda), device name and the
	// allocation holding it ("" when free).
	SlotsInfo() []resolute.Slot
	SlotType() string
}

// AgentInfo describes the machines of resource managers with many (the
// nodes of Kubernetes), for the cluster view.
type AgentInfo interface {
	AgentsInfo() []resolute.Agent
	SlotType() string
}

// Agents lists the machines and their slots: Kubernetes nodes, or the local
// resource manager's one machine ("local"), whose slots are in every pool.
func (x *Experiments) Agents() []resolute.Agent {
	if ai, ok := x.rm.(AgentInfo); ok {
		return ai.AgentsInfo()
	}
	a := resolute.Agent{ID: localAgent}
	if si, ok := x.rm.(SlotInfo); ok {
		a.Slots = si.SlotsInfo()
	}
	return []resolute.Agent{a}
}

// ResourcePools describes the pools, their schedulers and their slots.
func (x *Experiments) ResourcePools() []resolute.ResourcePool {
	if ai, ok := x.rm.(AgentInfo); ok {
		return x.agentPools(ai.AgentsInfo(), ai.SlotType())
	}
	var all []resolute.Slot
	slotType := "cpu"
	if si, ok := x.rm.(SlotInfo); ok {
		all, slotType = si.SlotsInfo(), si.SlotType()
	}
	byID := map[int]resolute.Slot{}
	for _, sl := range all {
		byID[sl.ID] = sl
	}
	var out []resolute.ResourcePool
	for _, p := range x.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.opts.ComputePool, DefaultAux: p.Name == x.opts.AuxPool}
		ids := p.SlotIDs
		if ids == nil {
			for _, sl := range all {
				ids = append(ids, sl.ID)
			}
		}
		for _, id := range ids {
			sl, ok := byID[id]
			if !ok {
				sl = resolute.Slot{ID: id, Device: slotType}
			}
			rp.Slots = append(rp.Slots, sl)
			if sl.AllocationID != "" {
				rp.SlotsUsed++
			}
		}
		out = append(out, rp)
	}
	return out
}

// updateTaskJob changes a task's priority; tasks keep their place by
// submission time.
func (x *Experiments) updateTaskJob(ctx context.Context, q *db.Queries, u resolute.QueueControl) error {
	t, err := q.Task(ctx, u.JobID)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return resolute.Errorf(resolute.EInvalid, "jobId: %q is not a job of this master (experiment-N or a task id)", u.JobID)
	} else if err != nil {
		return err
	}
	if t.State == resolute.TaskTerminated {
		return resolute.Errorf(resolute.EInvalid, "%s has ended", t.ID)
	}
	if u.Weight != nil || u.ResourcePool != nil || u.AheadOf != "" || u.BehindOf != "" {
		return resolute.Errorf(resolute.EInvalid, "%s: only the priority of a %s can be changed", t.ID, strings.ToLower(t.Type))
	}
	if u.Priority != nil {
		if *u.Priority < 1 || *u.Priority > 99 {
			return resolute.Errorf(resolute.EInvalid, "priority: must be between 1 and 99, got %d", *u.Priority)
		}
		return q.SetTaskPriority(ctx, t.ID, *u.Priority)
	}
	return nil
}

// agentPools are the pools with the slots of their agents.
func (x *Experiments) agentPools(agents []resolute.Agent, slotType string) []resolute.ResourcePool {
	var out []resolute.ResourcePool
	for _, p := range x.opts.Pools {
		rp := resolute.ResourcePool{Name: p.Name, Description: p.Description, SchedulerType: p.Scheduler.Type,
			Preemption: p.Scheduler.Preemption, FittingPolicy: p.Scheduler.FittingPolicy, DefaultPriority: p.Scheduler.DefaultPriority,
			SlotType: slotType, DefaultCompute: p.Name == x.opts.ComputePool, DefaultAux: p.Name == x.opts.AuxPool}
		for _, a := range agents {
			if a.ResourcePool != p.Name {
				continue
			}
			for _, sl := range a.Slots {
				rp.Slots = append(rp.Slots, sl)
				if sl.AllocationID != "" || sl.Foreign {
					rp.SlotsUsed++
				}
			}
		}
		out = append(out, rp)
	}
	return out
}
