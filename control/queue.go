package control

import (
	"context"
	"sort"
	"strconv"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
)

// Queue is the job queue: it lists the jobs of the pools with what the
// admission loop last decided of them, and changes their priority, weight,
// pool and place for their owners. It also describes the pools and their
// agents.
type Queue struct {
	c *core
}

// Jobs lists the jobs of a pool ("" for all) in queue order, with what the
// scheduler last said of them.
func (x *Queue) Jobs(ctx context.Context, pool string) ([]resolute.Job, error) {
	exps, err := x.c.db.QueuedExperiments(ctx, pool)
	if err != nil {
		return nil, err
	}
	allocs, err := x.c.db.LiveAllocations(ctx)
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
	d := x.c.lastDecision()
	out := make([]resolute.Job, 0, len(exps))
	for _, e := range exps {
		u := uses[e.ID]
		if u == nil {
			u = &use{}
		}
		j := resolute.Job{JobID: JobID(e.ID), Type: "EXPERIMENT", EntityID: strconv.FormatInt(e.ID, 10), Name: e.Name, UserID: e.UserID,
			Username: e.Username, WorkspaceID: e.WorkspaceID, State: "QUEUED", Priority: x.effectivePriority(e), Weight: e.Weight, ResourcePool: e.ResourcePool,
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
func (x *Queue) taskJobs(ctx context.Context, pool string, allocs []db.LiveAllocation, d scheduler.Decision) ([]resolute.Job, error) {
	live := true
	tasks, err := x.c.db.Tasks(ctx, db.TaskFilter{Live: &live})
	if err != nil {
		return nil, err
	}
	var out []resolute.Job
	for _, t := range tasks {
		if pool != "" && t.ResourcePool != pool {
			continue
		}
		j := resolute.Job{JobID: t.ID, Type: t.Type, EntityID: t.ID, Name: t.Description, UserID: t.UserID, Username: t.Username,
			WorkspaceID: t.WorkspaceID, State: "QUEUED", Priority: x.effectivePriority(resolute.Experiment{Priority: t.Priority, ResourcePool: t.ResourcePool}),
			Weight: t.Weight, ResourcePool: t.ResourcePool, RequestedSlots: t.Slots, QueuePosition: t.QueuePosition,
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

func (x *Queue) effectivePriority(e resolute.Experiment) int {
	if e.Priority != nil {
		return *e.Priority
	}
	for _, p := range x.c.opts.Pools {
		if p.Name == e.ResourcePool {
			return p.Scheduler.DefaultPriority
		}
	}
	return 42
}
