package scheduler

import (
	"math"
	"slices"
	"strconv"
)

// victim is a running task of a preemptible job that a more important
// pending task may preempt.
type victim struct {
	alloc  string
	q      int // index into poolPass.q
	lo, hi int // its parts: poolPass.parts[lo:hi]
	chosen bool
}

// part is the slots a task holds on one agent.
type part struct{ agent, n int }

// priority does step 6 for the pool's tasks that need slots. Jobs are walked
// in queue order (most important first) and each pending task:
//
//  1. waits if it can never fit (step 4) or its job is at MaxSlots (step 5);
//  2. waits behind the first blocked job if a task of a more important
//     priority level could not start, unless it may backfill (below);
//  3. starts if it fits in the free slots now (step 3);
//  4. otherwise waits, and keeps the slots it will get: if tasks already being
//     preempted will leave enough room, it is promised that room (free slots
//     first) so nothing smaller takes it; with Config.Preemption it may
//     instead preempt just enough running tasks of strictly less important
//     preemptible jobs (least important first; among equals the latest queue
//     position first) and be promised their slots. It starts in a later pass,
//     once the slots are really free.
//
// Backfilling follows Determined's priority.go: once a task could not start,
// tasks of less important levels start in the idle slots only if preemption
// is on and their job is preemptible (so they can be preempted when the
// blocked task can use the slots); without preemption they wait, so the
// blocked task gets the slots as they free up. Tasks of the blocked task's
// own level still start where they fit. Two departures: a task that can
// never fit, or is held back by MaxSlots, blocks nobody; and a task that
// only waits behind a blocked job neither promises itself slots nor
// preempts, so nothing is preempted for a task that could not start anyway.
func (pp *poolPass) priority() {
	if pp.cfg.Preemption {
		pp.collectVictims()
	}
	var blocker *queued // the first job with a task that could not start
	var behind string   // why tasks wait behind it
	for qi := range pp.q {
		q := &pp.q[qi]
		for ti := range q.job.Tasks {
			t := &q.job.Tasks[ti]
			if t.Running || t.Slots <= 0 {
				continue
			}
			if pp.never(t) || pp.capped(q, t) {
				continue
			}
			if blocker != nil && q.key > blocker.key && !(pp.cfg.Preemption && q.job.Preemptible) {
				pp.wait(t, behind)
				continue
			}
			if pp.tryStart(q, t) {
				continue
			}
			if blocker == nil {
				blocker = q
				behind = "behind " + q.job.ID + " (priority " + strconv.Itoa(q.prio) + "), which waits for slots"
			}
			if len(t.Avoid) > 0 {
				pp.wait(t, avoidReason(t))
				continue
			}
			if jobs := pp.tryReserve(t.Slots); jobs != nil {
				pp.wait(t, waitingFor(jobs))
				continue
			}
			if pp.cfg.Preemption {
				if jobs := pp.tryPreempt(q, t.Slots); jobs != nil {
					pp.wait(t, waitingFor(jobs))
					continue
				}
			}
			pp.wait(t, pp.needsReason(t.Slots))
		}
	}
}

// tryReserve promises an n-slot task room that tasks being preempted will
// leave, and returns the jobs it waits for; nil if there is no such room.
func (pp *poolPass) tryReserve(n int) []string {
	p := pp.pool
	single := n <= p.largest
	if p.pend == 0 || failed(n, p.evFail, p.spanEvFail, single) {
		return nil
	}
	agents := p.fit(n, capEventual)
	if agents == nil {
		if single {
			p.evFail = min(p.evFail, n)
		} else {
			p.spanEvFail = append(p.spanEvFail, n)
		}
		return nil
	}
	if jobs := p.reserve(agents, n); jobs != nil {
		return jobs
	}
	return []string{"running tasks"} // cannot happen: a fit now was tried first
}

// collectVictims lists the running tasks that preemption may take slots
// from, least important first: the queue walked backwards, and each job's
// tasks from the last.
func (pp *poolPass) collectVictims() {
	p := pp.pool
	for qi := len(pp.q) - 1; qi >= 0; qi-- {
		j := pp.q[qi].job
		if !j.Preemptible {
			continue
		}
		for ti := len(j.Tasks) - 1; ti >= 0; ti-- {
			t := &j.Tasks[ti]
			if !t.Running || t.Preempting || t.Slots <= 0 {
				continue
			}
			lo := len(pp.parts)
			for _, r := range t.Assigned {
				ai, ok := p.index[r.Agent]
				if !ok {
					continue
				}
				if k := slices.IndexFunc(pp.parts[lo:], func(pt part) bool { return pt.agent == ai }); k >= 0 {
					pp.parts[lo+k].n++
					continue
				}
				pp.parts = append(pp.parts, part{agent: ai, n: 1})
			}
			if len(pp.parts) > lo {
				pp.victims = append(pp.victims, victim{alloc: t.AllocationID, q: qi, lo: lo, hi: len(pp.parts)})
			}
		}
	}
}

// tryPreempt looks for running tasks of strictly less important preemptible
// jobs whose slots would let an n-slot task of q fit; if it finds them it
// preempts them, promises their room to the task and returns the jobs the
// task waits for.
func (pp *poolPass) tryPreempt(q *queued, n int) []string {
	p := pp.pool
	single := n <= p.largest
	if failed(n, p.preFail, p.spanPreFail, single) {
		return nil
	}
	var found []int
	for vi := pp.vStart; vi < len(pp.victims) && found == nil; vi++ {
		v := &pp.victims[vi]
		if pp.q[v.q].key <= q.key {
			break // victims are least important first: none further is less important than q
		}
		if v.chosen {
			continue
		}
		for _, pt := range pp.parts[v.lo:v.hi] {
			a := &p.agents[pt.agent]
			if len(a.candVictims) == 0 {
				pp.touched = append(pp.touched, pt.agent)
			}
			a.cand += pt.n
			a.candVictims = append(a.candVictims, vi)
		}
		// Only the agents this victim frees can have come to fit.
		for _, pt := range pp.parts[v.lo:v.hi] {
			a := &p.agents[pt.agent]
			if single && a.capacity(capVictims) >= n {
				found = []int{pt.agent}
				break
			}
			if !single && a.capacity(capVictims) == a.size {
				if f := p.fit(n, capVictims); f != nil {
					found = slices.Clone(f)
				}
				break
			}
		}
	}
	if found == nil {
		pp.resetCandidates()
		if single {
			p.preFail = min(p.preFail, n)
		} else {
			p.spanPreFail = append(p.spanPreFail, n)
		}
		return nil
	}
	if single {
		// Just enough: spare the more important candidates the task can do
		// without, keeping the less important ones.
		a := &p.agents[found[0]]
		for i := len(a.candVictims) - 1; i >= 0; i-- {
			v := &pp.victims[a.candVictims[i]]
			if k := pp.slotsOn(v, found[0]); a.capacity(capVictims)-k >= n {
				a.cand -= k
				a.candVictims = slices.Delete(a.candVictims, i, i+1)
			}
		}
	}
	var chosen []int
	for _, ai := range found {
		for _, vi := range p.agents[ai].candVictims {
			if !pp.victims[vi].chosen {
				pp.victims[vi].chosen = true
				chosen = append(chosen, vi)
			}
		}
	}
	slices.Sort(chosen) // least important first, as they were tried
	by := "preempted by " + q.job.ID + " (priority " + strconv.Itoa(q.prio) + ")"
	for _, vi := range chosen {
		v := &pp.victims[vi]
		pp.preempts = append(pp.preempts, Preempt{AllocationID: v.alloc, Reason: by})
		job := pp.q[v.q].job.ID
		for _, pt := range pp.parts[v.lo:v.hi] {
			a := &p.agents[pt.agent]
			a.pend += pt.n
			p.pend += pt.n
			if !slices.Contains(a.releasing, job) {
				a.releasing = append(a.releasing, job)
			}
		}
	}
	pp.resetCandidates()
	for pp.vStart < len(pp.victims) && pp.victims[pp.vStart].chosen {
		pp.vStart++
	}
	// Room being freed grew: eventual fits that failed may now succeed.
	p.evFail, p.spanEvFail = math.MaxInt, p.spanEvFail[:0]
	return p.reserve(found, n)
}

// slotsOn is how many slots victim v holds on agent ai.
func (pp *poolPass) slotsOn(v *victim, ai int) int {
	for _, pt := range pp.parts[v.lo:v.hi] {
		if pt.agent == ai {
			return pt.n
		}
	}
	return 0
}

// resetCandidates clears the scratch of a preemption attempt.
func (pp *poolPass) resetCandidates() {
	for _, ai := range pp.touched {
		a := &pp.pool.agents[ai]
		a.cand = 0
		a.candVictims = a.candVictims[:0]
	}
	pp.touched = pp.touched[:0]
}
