package control

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
)

// Update applies changes to the queue for the actor, in one
// transaction: priority (1-99), weight (> 0), resource pool, or a move ahead
// of or behind another job of the same pool. Jobs are experiments
// ("experiment-N") and tasks (commands, notebooks, shells, TensorBoards);
// of a task only the priority and the place change. Each job is changed by
// its owner or an administrator. A move never changes a priority: in a pool
// that runs jobs by priority, a job moves only among jobs of its priority.
// A pool's queue is locked while it is reordered, so concurrent moves apply
// one after another.
func (x *Queue) Update(ctx context.Context, a authz.Actor, updates []resolute.QueueControl) error {
	if len(updates) == 0 {
		return resolute.Errorf(resolute.EInvalid, "updates: give at least one")
	}
	err := x.c.db.InTx(ctx, func(q *db.Queries) error {
		for _, u := range updates {
			if err := x.updateOne(ctx, q, a, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		x.c.wakeAdmission()
	}
	return err
}

// queueJob is a job as a change of the queue sees it.
type queueJob struct {
	id       string
	exp      *resolute.Experiment // nil for a task
	task     *resolute.Task       // nil for an experiment
	ownerID  int64
	owner    string
	ws       int64 // its workspace
	pool     string
	priority *int
	weight   float64
	ended    string // its final state, "" while it may still run
}

// loadJob reads the job jobID names.
func loadJob(ctx context.Context, q *db.Queries, field, jobID string) (queueJob, error) {
	if rest, ok := strings.CutPrefix(jobID, "experiment-"); ok {
		id, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || id <= 0 {
			return queueJob{}, resolute.Errorf(resolute.EInvalid, "%s: %q is not a job id (experiment-N, or a task's id such as notebook-4)", field, jobID)
		}
		e, err := q.Experiment(ctx, id)
		if err != nil {
			return queueJob{}, err
		}
		j := queueJob{id: jobID, exp: &e, ownerID: e.UserID, owner: e.Username, ws: e.WorkspaceID, pool: e.ResourcePool, priority: e.Priority, weight: e.Weight}
		if resolute.Terminal(e.State) {
			j.ended = e.State
		}
		return j, nil
	}
	t, err := q.Task(ctx, jobID)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return queueJob{}, resolute.Errorf(resolute.ENotFound, "%s: there is no job %q on this master", field, jobID)
	} else if err != nil {
		return queueJob{}, err
	}
	j := queueJob{id: jobID, task: &t, ownerID: t.UserID, owner: t.Username, ws: t.WorkspaceID, pool: t.ResourcePool, priority: t.Priority, weight: t.Weight}
	if t.State == resolute.TaskTerminated {
		j.ended = t.State
	}
	return j, nil
}

func (x *Queue) updateOne(ctx context.Context, q *db.Queries, a authz.Actor, u resolute.QueueControl) error {
	j, err := loadJob(ctx, q, "jobId", u.JobID)
	if err != nil {
		return err
	}
	if err := authz.Can(a, authz.ChangeJob, authz.Job(j.id, j.ownerID, j.owner, j.ws)); err != nil {
		return err
	}
	if j.ended != "" {
		return resolute.Errorf(resolute.EInvalid, "%s is %s; only queued or running jobs can be changed", j.id, j.ended)
	}
	// Changes of a pool's queue take its lock, so concurrent ones apply one
	// after another; the job is read again under it, so a change made
	// meanwhile (another weight, another pool) is not written back over.
	queue, err := q.LockPoolQueue(ctx, j.pool)
	if err != nil {
		return err
	}
	pool := j.pool
	if j, err = loadJob(ctx, q, "jobId", u.JobID); err != nil {
		return err
	}
	if j.pool != pool {
		return resolute.Errorf(resolute.EConflict, "%s moved to pool %q while this change was made; try again", j.id, j.pool)
	}
	priority, weight := j.priority, j.weight
	if u.Priority != nil {
		if *u.Priority < 1 || *u.Priority > 99 {
			return resolute.Errorf(resolute.EInvalid, "priority: must be between 1 and 99, got %d", *u.Priority)
		}
		priority = u.Priority
	}
	if j.task != nil && (u.Weight != nil || u.ResourcePool != nil) {
		return resolute.Errorf(resolute.EInvalid, "%s: the weight and pool of a %s cannot change, only its priority and place",
			j.id, strings.ToLower(j.task.Type))
	}
	if u.Weight != nil {
		if *u.Weight <= 0 {
			return resolute.Errorf(resolute.EInvalid, "weight: must be more than 0, got %v", *u.Weight)
		}
		weight = *u.Weight
	}
	if u.ResourcePool != nil {
		if pool, err = x.c.poolFor(*u.ResourcePool); err != nil {
			return resolute.Errorf(resolute.EInvalid, "resourcePool: %s", strings.TrimPrefix(resolute.ErrorMessage(err), "resources.resource_pool: "))
		}
		if pool != j.pool {
			// A pool bound to other workspaces is theirs (seeds: resource
			// pool bindings), in the queue as at submission.
			pl, err := placementOf(ctx, q, j.exp.ProjectID)
			if err != nil {
				return err
			}
			if err := CheckPoolUse(pool, pl.workspace, pl.bindings); err != nil {
				return resolute.Errorf(resolute.EForbidden, "resourcePool: %s", resolute.ErrorMessage(err))
			}
		}
	}
	if u.AheadOf != "" && u.BehindOf != "" {
		return resolute.Errorf(resolute.EInvalid, "aheadOf and behindOf: give one")
	}
	if target := u.AheadOf + u.BehindOf; target != "" {
		field := "aheadOf"
		if u.BehindOf != "" {
			field = "behindOf"
		}
		if err := x.move(ctx, q, queue, j, field, target, u.AheadOf != "", priority, pool); err != nil {
			return err
		}
	}
	if j.task != nil {
		if u.Priority == nil {
			return nil
		}
		return q.SetTaskPriority(ctx, j.id, *u.Priority)
	}
	return q.SetExperimentScheduling(ctx, j.exp.ID, priority, weight, pool)
}

// move puts j ahead of (or behind) the job target in queue, the queue of
// pool; priority is j's after this change.
func (x *Queue) move(ctx context.Context, q *db.Queries, queue []db.QueueEntry, j queueJob, field, target string, ahead bool,
	priority *int, pool string) error {
	if target == j.id {
		return resolute.Errorf(resolute.EInvalid, "a job cannot move next to itself")
	}
	t, err := loadJob(ctx, q, field, target)
	if err != nil {
		return err
	}
	if t.ended != "" {
		return resolute.Errorf(resolute.EInvalid, "%s is %s; jobs can only move next to queued or running jobs", target, t.ended)
	}
	if t.pool != pool {
		return resolute.Errorf(resolute.EInvalid, "%s is in pool %q and %s in %q; a job moves only within its pool", target, t.pool, j.id, pool)
	}
	if x.poolRunsByPriority(pool) {
		mine, theirs := x.priorityIn(priority, pool), x.priorityIn(t.priority, pool)
		if mine != theirs {
			return resolute.Errorf(resolute.EInvalid, "job %s has priority %d and %s priority %d; pool %q runs jobs by priority, "+
				"so a move between them would change nothing: change %s's priority instead", j.id, mine, target, theirs, pool, j.id)
		}
	}
	if err := moveInQueue(ctx, q, queue, j.id, target, ahead); err != nil {
		if resolute.ErrorCode(err) == resolute.ENotFound {
			return resolute.Errorf(resolute.EInvalid, "%s is not in the queue of pool %q", target, pool)
		}
		return err
	}
	return nil
}

// poolRunsByPriority says whether pool's scheduler orders jobs by priority
// before their place in the queue.
func (x *Queue) poolRunsByPriority(pool string) bool {
	for _, p := range x.c.opts.Pools {
		if p.Name == pool {
			return p.Scheduler.Type == scheduler.TypePriority
		}
	}
	return false
}

// priorityIn is the priority a job of pool with priority p (nil: the pool's
// default) runs at.
func (x *Queue) priorityIn(p *int, pool string) int {
	return x.effectivePriority(resolute.Experiment{Priority: p, ResourcePool: pool})
}

// moveInQueue puts the job moving just ahead of (or behind) target. Usually
// one row changes: the new position lies between the neighbours. When there
// is no room left between them (equal or adjacent floats), the pool's queue
// is renumbered in its new order.
func moveInQueue(ctx context.Context, q *db.Queries, queue []db.QueueEntry, moving, target string, ahead bool) error {
	pos, ok := between(queue, moving, target, ahead)
	if !ok {
		return resolute.Errorf(resolute.ENotFound, "job not in the queue")
	}
	crowded := false
	for _, e := range queue {
		if e.JobID != moving && e.Position == pos {
			crowded = true
		}
	}
	if !crowded {
		return q.SetQueuePosition(ctx, moving, pos)
	}
	var order []string
	for _, e := range queue {
		switch {
		case e.JobID == moving:
			continue
		case e.JobID == target && ahead:
			order = append(order, moving, e.JobID)
		case e.JobID == target:
			order = append(order, e.JobID, moving)
		default:
			order = append(order, e.JobID)
		}
	}
	base := queue[0].Position
	for i, id := range order {
		if err := q.SetQueuePosition(ctx, id, base+float64(i)*1024); err != nil {
			return fmt.Errorf("renumber the queue: %w", err)
		}
	}
	return nil
}

// between is the position just ahead of (or behind) target in queue,
// ignoring the moving job itself.
func between(queue []db.QueueEntry, moving, target string, ahead bool) (float64, bool) {
	var rest []db.QueueEntry
	for _, e := range queue {
		if e.JobID != moving {
			rest = append(rest, e)
		}
	}
	for i, e := range rest {
		if e.JobID != target {
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
