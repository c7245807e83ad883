package control

import (
	"context"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
)

// Pump turns the resource manager's events into state changes until its
// Events closes or ctx ends: log lines are stored in batches (a task's tell
// the Tasks when its service is ready), and an exit goes to the Experiments
// when a trial's allocation ended, to the Tasks when a task's did. While
// the database is unavailable it waits and tries again, so no exit and no
// line is dropped; the resource manager holds the events that come
// meanwhile.
func (x *Admission) Pump(ctx context.Context) {
	events := x.c.rm.Events()
	var batch []resolute.TaskLog
	tasks := map[string]string{} // allocation → task, from the first line
	store := func(ctx context.Context) {
		if len(batch) == 0 {
			return
		}
		err := untilAvailable(ctx, func() error { return x.c.db.InsertTaskLogs(ctx, batch) })
		if err != nil && ctx.Err() == nil {
			x.c.logger.Error("store task logs", "lines", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	flush := func() { store(ctx) }
	// The last lines are stored even as the master stops.
	defer func() {
		last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		store(last)
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			flush()
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch e := ev.(type) {
			case resolute.AllocationStarted:
				// A task reached at an address of its own (a pod IP).
				if task := taskOf(e.AllocationID); e.Addr != "" && !strings.HasPrefix(task, "trial-") {
					err := untilAvailable(ctx, func() error { return x.c.db.SetTaskServiceHost(ctx, task, e.Addr) })
					if err != nil && ctx.Err() == nil {
						x.c.logger.Error("task address", "task", task, "err", err)
					}
				} else if e.Addr != "" { // a trial's, for its proxy ports
					err := untilAvailable(ctx, func() error { return x.c.db.SetAllocationAddr(ctx, e.AllocationID, e.Addr) })
					if err != nil && ctx.Err() == nil {
						x.c.logger.Error("allocation address", "allocation", e.AllocationID, "err", err)
					}
				}
			case resolute.AllocationLog:
				task, ok := tasks[e.AllocationID]
				if !ok {
					task = taskOf(e.AllocationID)
					tasks[e.AllocationID] = task
				}
				batch = append(batch, resolute.TaskLog{TaskID: task, AllocationID: e.AllocationID, Time: e.Time,
					Level: e.Level, StdType: e.Stream, Rank: e.Rank, Log: e.Line, AgentID: e.Agent, ContainerID: e.Container})
				if !strings.HasPrefix(task, "trial-") {
					x.tasks.logLine(ctx, task, e.Line)
				} else {
					x.c.logs.line(ctx, e.AllocationID, e.Line)
				}
				if len(batch) >= 1000 {
					flush()
				}
			case resolute.AllocationExited:
				flush() // its last lines first
				delete(tasks, e.AllocationID)
				x.c.logs.settle(ctx, e.AllocationID) // and what they asked for
				x.c.logs.forget(e.AllocationID)
				if e.Requeue {
					if err := untilAvailable(ctx, func() error { return x.requeue(ctx, e.AllocationID, e.Err) }); err != nil && ctx.Err() == nil {
						x.c.logger.Error("requeue", "allocation", e.AllocationID, "err", err)
					}
					continue
				}
				var code *int
				reason := ""
				if e.Err != nil {
					reason = e.Err.Error()
				} else {
					code = &e.ExitCode
				}
				if e.Killed {
					reason = "killed"
				}
				err := untilAvailable(ctx, func() error { return x.AllocationExited(ctx, e.AllocationID, code, reason) })
				if err != nil && ctx.Err() == nil {
					x.c.logger.Error("allocation exit", "allocation", e.AllocationID, "err", err)
				}
			}
		}
	}
}

// taskOf is the task of an allocation id "<task>.<run>".
func taskOf(allocationID string) string {
	for i := len(allocationID) - 1; i >= 0; i-- {
		if allocationID[i] == '.' {
			return allocationID[:i]
		}
	}
	return allocationID
}

// requeue puts an allocation that never really ran back in the queue.
func (x *Admission) requeue(ctx context.Context, allocationID string, why error) error {
	a, err := x.c.db.Allocation(ctx, allocationID)
	if err != nil {
		return err
	}
	msg := "the allocation goes back to the queue"
	if why != nil {
		msg = why.Error() + "; " + msg
	}
	x.c.taskLog(ctx, a, "WARNING", msg)
	if err := x.c.db.UnstartAllocation(ctx, allocationID); err != nil {
		return err
	}
	x.c.wakeAdmission()
	return nil
}

// AllocationExited hands the end of an allocation to what it ran: a
// trial's to the experiments, a task's to the tasks. A nil exitCode means
// the status is unknown.
func (x *Admission) AllocationExited(ctx context.Context, allocationID string, exitCode *int, reason string) error {
	a, err := x.c.db.Allocation(ctx, allocationID)
	if err != nil {
		return err
	}
	if a.TrialID == nil {
		return x.tasks.allocationExited(ctx, a, exitCode, reason)
	}
	return x.exps.allocationExited(ctx, a, exitCode, reason)
}
