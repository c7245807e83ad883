package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// ReasonUnknownPool is why the pending tasks of a job whose pool is not in
// the Snapshot wait.
const ReasonUnknownPool = "unknown pool"

// Decide is one scheduling pass: it looks at every pool of s on its own and
// says which pending tasks start on which slots, which running tasks are
// preempted, why every other pending task waits, and how many jobs are ahead
// of each job. It is pure (see the package doc).
//
// Actions are deterministic: every Preempt first (pools by name, then in the
// order the policy chose them), then every Start in scheduling order.
func Decide(s Snapshot) Decision {
	pending := 0
	for ji := range s.Jobs {
		for ti := range s.Jobs[ji].Tasks {
			if !s.Jobs[ji].Tasks[ti].Running {
				pending++
			}
		}
	}
	d := Decision{
		Waiting:   make(map[string]string, pending),
		JobsAhead: make(map[string]int, len(s.Jobs)),
	}

	// Jobs by pool; a job of a pool the snapshot lacks only waits.
	pools := make(map[string]int, len(s.Pools))
	var names []int
	for pi := range s.Pools {
		if _, dup := pools[s.Pools[pi].Name]; !dup {
			pools[s.Pools[pi].Name] = pi
			names = append(names, pi)
		}
	}
	slices.SortFunc(names, func(a, b int) int { return cmp.Compare(s.Pools[a].Name, s.Pools[b].Name) })
	byPool := make([][]int, len(s.Pools))
	for ji := range s.Jobs {
		j := &s.Jobs[ji]
		pi, ok := pools[j.Pool]
		if !ok {
			d.JobsAhead[j.ID] = -1
			for _, t := range j.Tasks {
				if !t.Running {
					d.Waiting[t.AllocationID] = ReasonUnknownPool
				}
			}
			continue
		}
		byPool[pi] = append(byPool[pi], ji)
	}

	var preempts, starts []Action
	for _, pi := range names {
		pp := newPoolPass(&s.Pools[pi], s.Jobs, byPool[pi], &d)
		pp.run()
		preempts = append(preempts, pp.preempts...)
		starts = append(starts, pp.starts...)
	}
	if len(preempts)+len(starts) > 0 {
		d.Actions = append(preempts, starts...)
	}
	return d
}

// queued is a job of a pool during a pass.
type queued struct {
	job  *Job
	prio int     // effective priority, as users see it
	key  int     // prio made comparable: lower goes first (0 outside priority)
	held int     // slots held by running tasks, those being preempted included
	pos  float64 // job.Position, kept here so that sorting stays in this slice
}

// poolPass is the decision for one pool.
type poolPass struct {
	cfg      Config
	pool     *poolState
	q        []queued // jobs in queue order
	d        *Decision
	preempts []Action
	starts   []Action

	victims []victim // priority with preemption: running tasks, least important first
	parts   []part   // backing store of victims' parts
	vStart  int      // victims before it are all chosen
	touched []int    // agents with cand set by the current preemption attempt

	needsFree int      // pool free slots the cached reasons were made for
	needsByN  []string // "needs n slots; …" by n, while free is needsFree
}

// newPoolPass does step 1 (capacity) and puts the pool's jobs in queue
// order: for priority by effective priority, then Position, Submitted and
// ID; otherwise by Position, Submitted and ID.
func newPoolPass(p *Pool, jobs []Job, idx []int, d *Decision) *poolPass {
	pp := &poolPass{cfg: p.Config, pool: newPoolState(p), q: make([]queued, len(idx)), d: d, needsFree: -1}
	isPriority := p.Config.Type != TypeFairShare && p.Config.Type != TypeRoundRobin
	for i, ji := range idx {
		j := &jobs[ji]
		q := queued{job: j, prio: j.Priority, pos: j.Position}
		if q.prio == 0 {
			q.prio = p.Config.DefaultPriority
		}
		if isPriority {
			q.key = q.prio
			if p.Config.HigherFirst {
				q.key = -q.prio
			}
		}
		for ti := range j.Tasks {
			if t := &j.Tasks[ti]; t.Running && t.Slots > 0 {
				q.held += t.Slots
			}
		}
		pp.q[i] = q
	}
	slices.SortFunc(pp.q, func(a, b queued) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := cmp.Compare(a.pos, b.pos); c != 0 {
			return c
		}
		if c := a.job.Submitted.Compare(b.job.Submitted); c != 0 {
			return c
		}
		return cmp.Compare(a.job.ID, b.job.ID)
	})
	for _, q := range pp.q { // in queue order, so reasons do not depend on the snapshot's
		for ti := range q.job.Tasks {
			if t := &q.job.Tasks[ti]; t.Running {
				pp.pool.hold(t.Assigned, t.Preempting, q.job.ID)
			}
		}
	}
	return pp
}

// run decides the pool under its policy; an unknown or empty Type is
// priority, Determined's default.
func (pp *poolPass) run() {
	switch pp.cfg.Type {
	case TypeFairShare:
		// Step 2, first-in first-out.
		fifo := pp.q
		if pp.anyZeroSlot() {
			fifo = slices.Clone(pp.q)
			slices.SortStableFunc(fifo, func(a, b queued) int { return a.job.Submitted.Compare(b.job.Submitted) })
		}
		pp.startZeroSlot(fifo)
		pp.fairShare()
		for _, q := range pp.q {
			pp.d.JobsAhead[q.job.ID] = -1
		}
	case TypeRoundRobin:
		pp.startZeroSlot(pp.q)
		pp.roundRobin()
		pp.jobsAhead()
	default:
		pp.startZeroSlot(pp.q)
		pp.priority()
		pp.jobsAhead()
	}
}

// startZeroSlot does step 2: tasks that need no slots are scheduled apart
// from the others and always fit, so every pending one starts, in order,
// unless every agent of the pool is disabled or avoided by it. A pool that
// lists no agents leaves the placing to its resource manager.
func (pp *poolPass) startZeroSlot(order []queued) {
	for _, q := range order {
		for ti := range q.job.Tasks {
			t := &q.job.Tasks[ti]
			if t.Running || t.Slots > 0 {
				continue
			}
			avoid, open := pp.pool.zeroSlotHosts(t.Avoid)
			if !open {
				pp.wait(t, ReasonNoOpenAgent+" "+pp.pool.name)
				continue
			}
			pp.starts = append(pp.starts, Start{AllocationID: t.AllocationID, Avoid: avoid})
		}
	}
}

// ReasonNoOpenAgent is why a task that needs no slots waits: every agent of
// its pool is disabled or excluded for it (the pool's name follows).
const ReasonNoOpenAgent = "waits for an agent that is not disabled or excluded in pool"

// zeroSlotHosts are the pool's agents a task that needs no slots must not
// land on (disabled, or in avoid), sorted, and whether any other is left.
func (p *poolState) zeroSlotHosts(avoid []string) (closed []string, open bool) {
	for _, a := range p.agents {
		if a.disabled || slices.Contains(avoid, a.id) {
			if !slices.Contains(closed, a.id) {
				closed = append(closed, a.id)
			}
		} else {
			open = true
		}
	}
	return closed, open || len(p.agents) == 0
}

// anyZeroSlot reports whether a pending task needs no slots.
func (pp *poolPass) anyZeroSlot() bool {
	for _, q := range pp.q {
		for ti := range q.job.Tasks {
			if t := &q.job.Tasks[ti]; !t.Running && t.Slots <= 0 {
				return true
			}
		}
	}
	return false
}

// jobsAhead does step 9: a job with pending tasks has as many jobs ahead of
// it as there are jobs with pending tasks before it in the queue; a job with
// nothing pending has none.
func (pp *poolPass) jobsAhead() {
	ahead := 0
	for _, q := range pp.q {
		pending := false
		for ti := range q.job.Tasks {
			if !q.job.Tasks[ti].Running {
				pending = true
				break
			}
		}
		if !pending {
			pp.d.JobsAhead[q.job.ID] = 0
			continue
		}
		pp.d.JobsAhead[q.job.ID] = ahead
		ahead++
	}
}

// tryStart starts t now if it fits in the free slots (step 3).
func (pp *poolPass) tryStart(q *queued, t *Task) bool {
	if len(t.Avoid) > 0 {
		return pp.tryStartAvoiding(q, t)
	}
	p, n := pp.pool, t.Slots
	single := n <= p.largest
	if failed(n, p.nowFail, p.spanNowFail, single) {
		return false
	}
	var agents []int
	if n <= p.free {
		agents = p.fit(n, capNow)
	}
	if agents == nil {
		if single {
			p.nowFail = min(p.nowFail, n)
		} else {
			p.spanNowFail = append(p.spanNowFail, n)
		}
		return false
	}
	pp.starts = append(pp.starts, Start{AllocationID: t.AllocationID, Slots: p.start(agents, n)})
	q.held += n
	return true
}

// tryStartAvoiding is tryStart for a task that must not run on some
// agents: for its fit they have no free slots. Its failure says nothing of
// other tasks' fits, so the memos are left alone.
func (pp *poolPass) tryStartAvoiding(q *queued, t *Task) bool {
	p, n := pp.pool, t.Slots
	type saved struct{ i, free int }
	var hidden []saved
	for _, id := range t.Avoid {
		if i, ok := p.index[id]; ok && p.agents[i].free > 0 {
			hidden = append(hidden, saved{i, p.agents[i].free})
			p.agents[i].free = 0
		}
	}
	var agents []int
	if n <= p.free {
		agents = p.fit(n, capNow)
	}
	for _, h := range hidden {
		p.agents[h.i].free = h.free
	}
	if agents == nil {
		return false
	}
	pp.starts = append(pp.starts, Start{AllocationID: t.AllocationID, Slots: p.start(agents, n)})
	q.held += n
	return true
}

// unfitReason is why a task that tryStart could not start waits.
func (pp *poolPass) unfitReason(t *Task) string {
	if len(t.Avoid) > 0 {
		return avoidReason(t)
	}
	return pp.needsReason(t.Slots)
}

// avoidReason is why a task that avoids agents waits.
func avoidReason(t *Task) string {
	return "waits for slots on an agent other than " + strings.Join(t.Avoid, ", ") + " (excluded by a log policy)"
}

// capped does step 5: a task that would take its job past MaxSlots waits.
func (pp *poolPass) capped(q *queued, t *Task) bool {
	if m := q.job.MaxSlots; m > 0 && q.held+t.Slots > m {
		pp.wait(t, "max_slots "+strconv.Itoa(m)+" reached")
		return true
	}
	return false
}

// never does step 4: a task that can never fit in the pool waits, saying so.
func (pp *poolPass) never(t *Task) bool {
	if r := pp.pool.neverReason(t.Slots); r != "" {
		pp.wait(t, r)
		return true
	}
	return false
}

// wait records why t did not start.
func (pp *poolPass) wait(t *Task, reason string) {
	pp.d.Waiting[t.AllocationID] = reason
}

// needsReason is "needs n slots; f free in pool p", with a word on gangs
// when enough slots are free but not together.
func (pp *poolPass) needsReason(n int) string {
	p := pp.pool
	if p.free != pp.needsFree {
		pp.needsFree = p.free
		clear(pp.needsByN)
	}
	if n < len(pp.needsByN) && pp.needsByN[n] != "" {
		return pp.needsByN[n]
	}
	r := "needs " + slotWord(n) + "; " + strconv.Itoa(p.free) + " free in pool " + p.name
	if p.free >= n {
		if n <= p.largest {
			most := 0
			for i := range p.agents {
				most = max(most, p.agents[i].free)
			}
			r = "needs " + slotWord(n) + " on one agent; " + strconv.Itoa(p.free) + " free in pool " +
				p.name + ", at most " + strconv.Itoa(most) + " on one agent"
		} else {
			r = "needs " + slotWord(n) + " on whole free agents; " + strconv.Itoa(p.free) +
				" free in pool " + p.name
		}
	}
	if n < 64 {
		if pp.needsByN == nil {
			pp.needsByN = make([]string, 64)
		}
		pp.needsByN[n] = r
	}
	return r
}

// waitingFor is the reason of a task that waits for preempted tasks.
func waitingFor(jobs []string) string {
	return "waiting for " + strings.Join(jobs, ", ") + " to free slots (preempting)"
}
