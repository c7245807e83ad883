package control

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/scheduler"
)

// RunOptions is what launching tasks needs to know of the master. (Where
// the harness and the task Python are is the resource manager's business.)
type RunOptions struct {
	MasterURL string // how tasks reach the master
	ClusterID string
	WorkRoot  string // allocations' work directories live here
	KillGrace time.Duration
	// Pools are the resource pools and their slots; none means one pool,
	// "default", with every slot and the priority scheduler.
	Pools       []Pool
	ComputePool string // default pool of work with slots; "" = the first pool
	AuxPool     string // default pool of zero-slot work; "" = the first pool
	// NotebookTimeout and TensorboardTimeout are the default idle timeouts
	// (master notebook_timeout, tensorboard_timeout); 0 turns them off.
	NotebookTimeout    time.Duration
	TensorboardTimeout time.Duration
	// TaskUIDBase gives unlinked users' tasks their Unix ids: base + user
	// id (master task_uid_base); 0 means resolute.DefaultTaskUIDBase.
	TaskUIDBase int
	// Namespaces says the resource manager runs pods in Kubernetes
	// namespaces, so that workspaces may name their own.
	Namespaces bool
}

// Pool is a resource pool.
type Pool struct {
	Name        string
	Description string
	Scheduler   scheduler.Config
	SlotIDs     []int // nil: every slot the resource manager gives the pool; else these only
}

// Runner is how the master runs work, in four parts over one shared core:
// the admission loop, the experiment and trial state machine, the tasks
// (commands, notebooks, shells, TensorBoards) and the job queue.
type Runner struct {
	Admission   *Admission
	Experiments *Experiments
	Tasks       *Tasks
	Queue       *Queue
}

// core is the runner's shared core, nil for a runner of no parts.
func (r *Runner) core() *core {
	switch {
	case r.Queue != nil:
		return r.Queue.c
	case r.Tasks != nil:
		return r.Tasks.c
	}
	return nil
}

// Option changes an optional knob of NewRunner.
type Option func(*core)

// WithClock makes the runner read the time from now instead of time.Now:
// preemption deadlines, the admission snapshot, idle timeouts and the
// master's lines in task logs.
func WithClock(now func() time.Time) Option {
	return func(c *core) { c.now = now }
}

// CycleStats is what one admission cycle took and saw.
type CycleStats struct {
	Took  time.Duration
	Pools map[string]PoolLoad // every configured pool
}

// PoolLoad counts the allocations of one pool that have not ended: those
// waiting for slots, and those running (some of them asked to give their
// slots back).
type PoolLoad struct {
	Pending, Running, Preempting int
}

// loadOf counts what a snapshot holds per pool.
func loadOf(snap scheduler.Snapshot) map[string]PoolLoad {
	load := make(map[string]PoolLoad, len(snap.Pools))
	for _, p := range snap.Pools {
		load[p.Name] = PoolLoad{}
	}
	for _, j := range snap.Jobs {
		l := load[j.Pool]
		for _, t := range j.Tasks {
			switch {
			case t.Running && t.Preempting:
				l.Running++
				l.Preempting++
			case t.Running:
				l.Running++
			default:
				l.Pending++
			}
		}
		load[j.Pool] = l
	}
	return load
}

// WithCycleObserver tells fn of every admission cycle that did not fail:
// how long it took and what it saw per pool (for the master's /metrics).
func WithCycleObserver(fn func(CycleStats)) Option {
	return func(c *core) { c.observe = fn }
}

// WithWebhooks gives the runner the webhook sender, which log-pattern
// (TASK_LOG) webhooks go through.
func WithWebhooks(s *WebhookSender) Option {
	return func(c *core) { c.webhooks = s }
}

// NewRunner returns the runner of experiments and tasks; call
// Admission.Recover once, then Admission.Run and Admission.Pump.
func NewRunner(database *db.DB, configs *Configs, rm ResourceManager, opts RunOptions, logger *slog.Logger, options ...Option) *Runner {
	if opts.KillGrace == 0 {
		opts.KillGrace = 10 * time.Second
	}
	if opts.TaskUIDBase == 0 {
		opts.TaskUIDBase = resolute.DefaultTaskUIDBase
	}
	if len(opts.Pools) == 0 {
		opts.Pools = []Pool{{Name: "default", Scheduler: scheduler.Config{Type: scheduler.TypePriority,
			FittingPolicy: scheduler.FitBest, DefaultPriority: 42}}}
	}
	if opts.ComputePool == "" {
		opts.ComputePool = opts.Pools[0].Name
	}
	if opts.AuxPool == "" {
		opts.AuxPool = opts.Pools[0].Name
	}
	c := &core{db: database, configs: configs, rm: rm, opts: opts, logger: logger,
		wake: make(chan struct{}, 1), now: time.Now}
	for _, o := range options {
		o(c)
	}
	c.logs = newLogWatcher(c)
	queue := &Queue{c: c}
	exps := &Experiments{c: c, queue: queue}
	tasks := &Tasks{c: c}
	return &Runner{Admission: &Admission{c: c, exps: exps, tasks: tasks}, Experiments: exps, Tasks: tasks, Queue: queue}
}

// core is what the four parts of the Runner share: the database, the
// configs, the resource manager, the options, the logger, the clock, the
// admission loop's wake-up channel and its latest decision. It holds state,
// not rules: each rule is a method of one of the four.
type core struct {
	db      *db.DB
	configs *Configs
	rm      ResourceManager
	opts    RunOptions
	logger  *slog.Logger
	now     func() time.Time
	wake    chan struct{}

	// observe, when set, is told of every admission cycle (WithCycleObserver).
	observe func(CycleStats)

	mu   sync.Mutex
	last scheduler.Decision // of the latest admission cycle, for the job queue
	load map[string]PoolLoad

	// webhooks sends webhook events (nil: none are sent); logs applies log
	// policies and log-pattern webhooks to trials' lines (the pump's).
	webhooks *WebhookSender
	logs     *logWatcher
}

// wakeAdmission asks the admission loop to look for work now.
func (c *core) wakeAdmission() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// lastDecision is the scheduler's decision of the latest admission cycle.
func (c *core) lastDecision() scheduler.Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// setLastDecision keeps the decision of an admission cycle and what its
// snapshot held per pool.
func (c *core) setLastDecision(d scheduler.Decision, load map[string]PoolLoad) {
	c.mu.Lock()
	c.last, c.load = d, load
	c.mu.Unlock()
}

// lastLoad is what the latest admission cycle's snapshot held per pool.
func (c *core) lastLoad() map[string]PoolLoad {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load
}

// taskLog records a line of the master's own in a task's log.
func (c *core) taskLog(ctx context.Context, a resolute.Allocation, level, msg string) {
	err := c.db.InsertTaskLogs(ctx, []resolute.TaskLog{{TaskID: a.TaskID, AllocationID: a.ID, Time: c.now(),
		Level: level, Source: "master", Log: msg}})
	if err != nil && !quiet(ctx, err) {
		c.logger.Error("task log", "allocation", a.ID, "err", err)
	}
}

// poolFor routes work: the resource pool it asks for, else the default
// compute pool (seeds: experiments go to the compute pool).
func (c *core) poolFor(asked string) (string, error) {
	if asked == "" {
		return c.opts.ComputePool, nil
	}
	var names []string
	for _, p := range c.opts.Pools {
		if p.Name == asked {
			return asked, nil
		}
		names = append(names, p.Name)
	}
	return "", resolute.Errorf(resolute.EInvalid, "resources.resource_pool: pool %q does not exist; the pools are %s", asked, strings.Join(names, ", "))
}

// poolAgents are the machines of a pool with the slots it may use: those the
// resource manager gives it, narrowed to its slot_ids when it names them.
func (c *core) poolAgents(p Pool) []resolute.Agent {
	agents := c.rm.Agents(p.Name)
	if p.SlotIDs == nil {
		return agents
	}
	for i, a := range agents {
		agents[i].Slots = slices.DeleteFunc(slices.Clone(a.Slots), func(s resolute.Slot) bool { return !slices.Contains(p.SlotIDs, s.ID) })
	}
	return agents
}

// projectFor picks the project of an experiment or a task: the request's,
// the config's workspace and project names, or the default project.
func (c *core) projectFor(ctx context.Context, cfg *expconf.ExperimentConfig, requested int64) (int64, error) {
	if requested != 0 {
		p, err := c.db.Project(ctx, requested)
		return p.ID, err
	}
	wsName, projName := cfg.Workspace, cfg.Project
	if wsName == "" && projName == "" {
		wsName, projName = resolute.DefaultWorkspaceName, resolute.DefaultProjectName
	}
	if wsName == "" || projName == "" {
		return 0, resolute.Errorf(resolute.EInvalid, "workspace and project: give both or neither")
	}
	ws, err := c.db.WorkspaceByName(ctx, wsName)
	if err != nil {
		return 0, err
	}
	projects, err := c.db.Projects(ctx, db.ProjectFilter{WorkspaceID: &ws.ID})
	if err != nil {
		return 0, err
	}
	for _, p := range projects {
		if p.Name == projName {
			return p.ID, nil
		}
	}
	return 0, resolute.Errorf(resolute.ENotFound, "project %q not found in workspace %q", projName, wsName)
}
