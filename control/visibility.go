package control

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Under RBAC what a user is told of the cluster as a whole (the live
// updates, the slots of the cluster page and /api/v1/agents, the job
// queue) names no object of a workspace they do not read.

// seesEverything says whether a reads every experiment and task: under
// basic authorization, the system, and a role that grants both
// cluster-wide.
func seesEverything(a authz.Actor) bool {
	_, rbac := a.RBAC()
	return !rbac || a.Sees(authz.ViewExperiment, 0) && a.Sees(authz.ViewNSC, 0)
}

// objectKeys collects the experiments, trials and tasks that keys
// ("experiment:3", "trial:27", "task:notebook-4") name, for
// db.TopicOwners; a trial's task ("task:trial-27") is its trial.
type objectKeys struct {
	exps, trials []int64
	tasks        []string
}

// add notes the object of kind ("experiment", "trial", "task") and id, and
// returns its key in TopicOwners' answer; "" for an id that is no id.
func (k *objectKeys) add(kind, id string) string {
	if kind == "task" {
		if rest, ok := strings.CutPrefix(id, "trial-"); ok {
			kind, id = "trial", rest
		}
	}
	if kind == "task" {
		k.tasks = append(k.tasks, id)
		return "task:" + id
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return ""
	}
	if kind == "experiment" {
		k.exps = append(k.exps, n)
	} else {
		k.trials = append(k.trials, n)
	}
	return kind + ":" + id
}

// owners reads the workspaces of the objects noted (none: no query).
func (k *objectKeys) owners(ctx context.Context, d *db.DB) (map[string]db.TopicOwner, error) {
	if len(k.exps)+len(k.trials)+len(k.tasks) == 0 {
		return nil, nil
	}
	return d.TopicOwners(ctx, k.exps, k.trials, k.tasks)
}

// sees says whether a reads an object of owner o.
func sees(a authz.Actor, o db.TopicOwner) bool {
	if o.TaskType != "" {
		return a.Sees(authz.ViewPermission("task", o.TaskType), o.WorkspaceID)
	}
	return a.Sees(authz.ViewExperiment, o.WorkspaceID)
}

// topicKinds are the object topics' kinds (package live and the
// migrations' triggers) with the kind of object each names.
var topicKinds = map[string]string{
	"experiment": "experiment", "experiment-logs": "experiment",
	"trial": "trial", "system-metrics": "trial",
	"task": "task", "logs": "task",
}

// VisibleTopics is what of the live updates' topics (package live) actor a
// may be told of: under basic authorization, and for those who read every
// workspace, all of them; under RBAC the collection topics ("experiments")
// and the pools' queues, and an object's topic (experiment:3, trial:27,
// task:notebook-4, logs:trial-27, ...) only when a reads that object's
// workspace. An object that no longer exists, and a kind of object topic
// this does not know, are told to nobody else: /events tells nothing of
// another workspace's objects, not even that they changed.
func (s *Roles) VisibleTopics(ctx context.Context, a authz.Actor, topics []string) ([]string, error) {
	if seesEverything(a) {
		return topics, nil
	}
	var k objectKeys
	keys := make([]string, len(topics))
	for i, t := range topics {
		if kind, id, ok := strings.Cut(t, ":"); ok && topicKinds[kind] != "" {
			keys[i] = k.add(topicKinds[kind], id)
		}
	}
	owners, err := k.owners(ctx, s.db)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, t := range topics {
		kind, _, isObject := strings.Cut(t, ":")
		if !isObject || kind == "queue" {
			out = append(out, t)
		} else if o, found := owners[keys[i]]; found && sees(a, o) {
			out = append(out, t)
		}
	}
	return out, nil
}

// AgentsFor lists the agents as Agents does, for a, with whether each slot
// is enabled: under RBAC a slot held by an allocation of a workspace a
// does not read says only that it is held (Hidden), not by what.
func (x *Queue) AgentsFor(ctx context.Context, a authz.Actor) ([]resolute.Agent, error) {
	states, err := x.c.db.SlotStates(ctx)
	if err != nil {
		return nil, err
	}
	agents := x.Agents()
	var slots [][]resolute.Slot
	for _, ag := range agents {
		withSlotStates(states, ag.Slots, func(resolute.Slot) string { return ag.ID })
		slots = append(slots, ag.Slots)
	}
	return agents, x.hideSlots(ctx, a, slots...)
}

// ResourcePoolsFor describes the pools as ResourcePools does, for a: their
// slots as AgentsFor shows them.
func (x *Queue) ResourcePoolsFor(ctx context.Context, a authz.Actor) ([]resolute.ResourcePool, error) {
	// Without the states, the pools are still described (a page shows them).
	states, serr := x.c.db.SlotStates(ctx)
	pools := x.resourcePools(states)
	var slots [][]resolute.Slot
	for _, p := range pools {
		slots = append(slots, p.Slots)
	}
	return pools, errors.Join(serr, x.hideSlots(ctx, a, slots...))
}

// hideSlots blanks, in place, the allocation of each slot that a may not
// read, marking it Hidden; every held slot when the database cannot say.
func (x *Queue) hideSlots(ctx context.Context, a authz.Actor, lists ...[]resolute.Slot) error {
	if seesEverything(a) {
		return nil
	}
	var k objectKeys
	for _, l := range lists {
		for _, sl := range l {
			if sl.AllocationID != "" {
				k.add("task", allocationTask(sl.AllocationID))
			}
		}
	}
	owners, err := k.owners(ctx, x.c.db)
	for _, l := range lists {
		for i, sl := range l {
			if sl.AllocationID == "" {
				continue
			}
			var probe objectKeys
			if o, found := owners[probe.add("task", allocationTask(sl.AllocationID))]; err != nil || !found || !sees(a, o) {
				l[i].AllocationID, l[i].Hidden = "", true
			}
		}
	}
	return err
}

// allocationTask is the task of an allocation's id, <task id>.<run>.
func allocationTask(id string) string {
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		return id[:i]
	}
	return id
}

// JobsFor lists the jobs of a pool as Jobs does, those a reads: under RBAC
// the jobs of the workspaces where a holds a role that reads them (the
// queue is built in memory from the scheduler's last decision, so it is
// filtered here, by the same rule as the lists' SQL).
func (x *Queue) JobsFor(ctx context.Context, a authz.Actor, pool string) ([]resolute.Job, error) {
	jobs, err := x.Jobs(ctx, pool)
	if err != nil {
		return nil, err
	}
	out := jobs[:0:0]
	for _, j := range jobs {
		taskType := j.Type
		if taskType == "EXPERIMENT" {
			taskType = ""
		}
		if a.Sees(authz.ViewPermission("job", taskType), j.WorkspaceID) {
			out = append(out, j)
		}
	}
	return out, nil
}

// readTemplate returns the template called name, which a names for an
// experiment or a task: one a may not read is, under RBAC, not found, as
// its page would be.
func readTemplate(ctx context.Context, d *db.DB, a authz.Actor, name string) (resolute.Template, error) {
	t, err := d.Template(ctx, name)
	if err != nil {
		return t, err
	}
	if err := readable(a, authz.Template(t)); err != nil {
		return resolute.Template{}, err
	}
	return t, nil
}

// readable is nil when a may read o; under RBAC an object a may not read
// is not found, as its page is, so that its existence is not told either.
func readable(a authz.Actor, o authz.Object) error {
	err := authz.Can(a, authz.Read, o)
	if _, rbac := a.RBAC(); rbac && resolute.ErrorCode(err) == resolute.EForbidden {
		return resolute.Errorf(resolute.ENotFound, "%s %s not found", o.Kind, o.Name)
	}
	return err
}

// Get returns workspace id with its settings (secrets masked) to one who
// may read it: its settings page and namespace bindings.
func (s *WorkspaceSettings) Get(ctx context.Context, a authz.Actor, id int64) (resolute.Workspace, error) {
	w, err := s.db.Workspace(ctx, id)
	if err != nil {
		return w, err
	}
	if err := readable(a, authz.Workspace(w)); err != nil {
		return resolute.Workspace{}, err
	}
	return w, nil
}
