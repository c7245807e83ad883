package scheduler

import "time"

// Scheduler types.
const (
	TypePriority   = "priority"
	TypeFairShare  = "fair_share"
	TypeRoundRobin = "round_robin"
)

// Fitting policies.
const (
	FitBest  = "best"  // pack: the agent with the fewest free slots that fits
	FitWorst = "worst" // spread: the agent with the most free slots
)

// Config is one pool's scheduler, as master.yaml's
// resource_manager.scheduler (or a pool's scheduler block) gives it.
type Config struct {
	Type            string // TypePriority, TypeFairShare or TypeRoundRobin
	Preemption      bool   // priority: preempt lower-priority work for higher
	FittingPolicy   string // FitBest (default) or FitWorst
	DefaultPriority int    // for jobs without one: 42 on the local resource manager
	// HigherFirst is true on Kubernetes, where a higher priority number runs
	// first; on the local resource manager a lower number runs first.
	HigherFirst bool
}

// Snapshot is everything Decide looks at: the pools and their agents, and
// every job with its tasks, pending and running.
type Snapshot struct {
	Pools []Pool
	Jobs  []Job
	Now   time.Time
}

// Pool is a resource pool: agents (machines, or Kubernetes nodes) with slots.
type Pool struct {
	Name   string
	Config Config
	Agents []Agent
}

// Agent is one machine of a pool and the ids of its slots.
type Agent struct {
	ID      string
	SlotIDs []int
	// Disabled agents take no new work (det agent disable): SlotIDs are
	// only the slots running allocations hold there, and no task that
	// needs no slots starts there either.
	Disabled bool
}

// Job is what the queue orders: an experiment (its trials are its tasks) or
// a command, notebook, shell or TensorBoard (one task).
type Job struct {
	ID          string // e.g. "experiment-12"
	Pool        string
	Priority    int // 0: the pool's DefaultPriority
	Weight      float64
	Position    float64 // queue position: lower goes first among equals
	Submitted   time.Time
	Preemptible bool // only experiments are
	MaxSlots    int  // resources.max_slots; 0: no cap
	Tasks       []Task
}

// Task is one allocation of a job: a trial's run, or an interactive task.
type Task struct {
	AllocationID string
	Slots        int  // slots it needs, all at once (gang); 0 for CPU-only
	Running      bool // holds Assigned
	Assigned     []SlotRef
	Preempting   bool // already asked to give its slots back
	// Avoid names agents a pending task must not start on (a log policy's
	// exclude_node): they offer it no slots, and it waits rather than
	// reserve or preempt for room.
	Avoid []string
}

// SlotRef names one slot of one agent.
type SlotRef struct {
	Agent string
	Slot  int
}

// Action is what Decide asks for: Start or Preempt.
type Action interface{ isAction() }

// Start runs a pending task on the given slots (all on one agent unless the
// task needs more than an agent has).
type Start struct {
	AllocationID string
	Slots        []SlotRef
	// Avoid, for a task that needs no slots, names the pool's agents it
	// must not land on (disabled, or excluded by a log policy): a
	// resource manager that places such tasks itself keeps them off.
	Avoid []string
}

// Preempt asks a running task to checkpoint and give its slots back.
type Preempt struct {
	AllocationID string
	Reason       string // e.g. "preempted by experiment-7 (priority 1)"
}

func (Start) isAction()   {}
func (Preempt) isAction() {}

// Decision is the outcome of one scheduling pass.
type Decision struct {
	Actions []Action
	// Waiting says why each pending task that was not started waits, e.g.
	// "needs 4 slots; 2 free in pool default", or "can never run: needs 16
	// slots; the largest agent of pool gpu has 8".
	Waiting map[string]string
	// JobsAhead is, for each job, how many jobs are ahead of it in its pool's
	// queue (-1 for fair share, where there is no order).
	JobsAhead map[string]int
}
