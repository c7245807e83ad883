package scheduler

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// remBuckets is how finely giveRemainders buckets remainders.
const remBuckets = 1024

// fsJob is an active job under fair share: one with tasks that need slots,
// pending or running.
type fsJob struct {
	q        *queued
	rank     int     // queue position (Position, Submitted, ID): ties go to the lower
	demand   int     // slots of its pending and running tasks, capped by MaxSlots
	weight   float64 // Job.Weight, 1 when unset
	smallest int     // slots of its smallest pending task that could ever run
	active   int     // slots of running tasks not being preempted
	share    int
	frac     float64 // scratch of fillShares: what flooring the share cut off
	disabled bool    // gave its share away: it could not use it (deadlock breaker)
}

// fairShare does step 7. Every active job gets a share of the pool's slots
// in proportion to demand × weight, by max-min progressive filling: a job
// whose proportional share reaches its demand gets its demand and leaves
// the rest to the others, until no share reaches its demand; then shares are
// floored and the slots left over go one each to the largest remainders
// (ties to the earlier queue position). So 8 slots, demands 10 and 30 →
// 2 and 6; weights 3 and 1 → 4 and 4.
//
// A job whose share cannot hold even its smallest pending task and that runs
// nothing gives its share away, as Determined breaks gang deadlocks: in each
// round every such job but the earliest in the queue gives it away (the
// earliest too when it is the only one), and shares are recomputed, until
// no such job is left. (Determined gives away one share per round, the
// latest job's; a round per job is too slow for thousands of jobs.)
//
// Then, in queue order, jobs start pending tasks that fit in the free slots
// while their running slots stay within their share. If a job is still
// below its share with a waiting task its share could hold, every job above
// its share has running tasks preempted, latest first, until it is down to
// its share (fair share always preempts; non-preemptible jobs are left
// alone). Slots of tasks already being preempted do not count against a
// job's share for preemption, but do for starting.
func (pp *poolPass) fairShare() {
	p := pp.pool
	jobs := make([]fsJob, 0, len(pp.q))
	for qi := range pp.q {
		q := &pp.q[qi]
		j := fsJob{q: q, rank: qi, weight: q.job.Weight, smallest: math.MaxInt}
		if j.weight <= 0 {
			j.weight = 1
		}
		for ti := range q.job.Tasks {
			t := &q.job.Tasks[ti]
			switch {
			case t.Slots <= 0:
			case t.Running:
				j.demand += t.Slots
				if !t.Preempting {
					j.active += t.Slots
				}
			case p.neverReason(t.Slots) == "":
				j.demand += t.Slots
				j.smallest = min(j.smallest, t.Slots)
			}
		}
		if m := q.job.MaxSlots; m > 0 {
			j.demand = min(j.demand, m)
		}
		if j.demand > 0 {
			jobs = append(jobs, j)
		}
	}

	open := fillShares(jobs, p.total, nil)
	for {
		first, stuck := -1, 0
		for i := range jobs {
			if j := &jobs[i]; !j.disabled && j.share > 0 && j.q.held == 0 && j.smallest > j.share {
				if first < 0 {
					first = i
				}
				j.disabled = true
				stuck++
			}
		}
		if stuck == 0 {
			break
		}
		if stuck > 1 {
			jobs[first].disabled = false // the earliest keeps its share, which can only grow
		}
		open = fillShares(jobs, p.total, open)
	}

	// Starts, within shares.
	byQ := make([]*fsJob, len(pp.q))
	for i := range jobs {
		byQ[jobs[i].rank] = &jobs[i]
	}
	needy := false
	overReasons := map[[2]int]string{} // by share and slots held: most jobs share a few
	for qi := range pp.q {
		q := &pp.q[qi]
		j := byQ[qi]
		waiting := 0 // slots of its tasks that wait for slots within its share
		for ti := range q.job.Tasks {
			t := &q.job.Tasks[ti]
			if t.Running || t.Slots <= 0 || pp.never(t) || pp.capped(q, t) {
				continue
			}
			share := 0
			if j != nil {
				share = j.share
			}
			if q.held+waiting+t.Slots > share {
				over, ok := overReasons[[2]int{share, q.held}]
				if !ok {
					over = "fair share of " + slotWord(share) + " reached (holds " + strconv.Itoa(q.held) + ")"
					overReasons[[2]int{share, q.held}] = over
				}
				pp.wait(t, over)
				continue
			}
			if !pp.tryStart(q, t) {
				pp.wait(t, pp.unfitReason(t))
				waiting += t.Slots
				needy = true
			}
		}
	}
	if !needy {
		return
	}

	// Preemptions, down to shares; the latest job and task first.
	for i := len(jobs) - 1; i >= 0; i-- {
		j := &jobs[i]
		if !j.q.job.Preemptible || j.active <= j.share {
			continue
		}
		reason := "preempted: " + j.q.job.ID + " is above its fair share of " + slotWord(j.share)
		tasks := j.q.job.Tasks
		for ti := len(tasks) - 1; ti >= 0 && j.active > j.share; ti-- {
			if t := &tasks[ti]; t.Running && !t.Preempting && t.Slots > 0 {
				pp.preempts = append(pp.preempts, Preempt{AllocationID: t.AllocationID, Reason: reason})
				j.active -= t.Slots
			}
		}
	}
}

// fillShares sets the share of every job that is not disabled: progressive
// filling of capacity in proportion to demand × weight, capped at demand,
// then floors and largest remainders (see fairShare). buf is scratch, and
// is returned for the next call. Jobs are named by index, not pointer, which
// spares the garbage collector's write barriers in these loops.
func fillShares(jobs []fsJob, capacity int, buf []int32) []int32 {
	open := buf[:0]
	for i := range jobs {
		jobs[i].share = 0
		if !jobs[i].disabled {
			open = append(open, int32(i))
		}
	}
	buf = open
	left := capacity
	for len(open) > 0 && left > 0 {
		sum := 0.0
		for _, i := range open {
			sum += jobs[i].weight * float64(jobs[i].demand)
		}
		// A job's proportional share left·w·d/sum reaches its demand d
		// exactly when left·w ≥ sum.
		rest := open[:0] // filtered in place
		capped := 0
		for _, i := range open {
			if j := &jobs[i]; float64(left)*j.weight >= sum {
				j.share = j.demand
				capped += j.demand
			} else {
				rest = append(rest, i)
			}
		}
		if capped > 0 {
			left = max(left-capped, 0)
			open = rest
			continue
		}
		given := 0
		for _, i := range open {
			j := &jobs[i]
			j.frac = float64(left) * j.weight * float64(j.demand) / sum
			j.share = min(int(j.frac), j.demand)
			j.frac -= float64(j.share)
			given += j.share
		}
		giveRemainders(jobs, open, left-given)
		break
	}
	return buf
}

// giveRemainders gives n more slots, one each, to the open jobs with the
// largest remainders (frac), ties to the earlier rank. Jobs are bucketed by
// remainder so that only the bucket at the cut is sorted: a full sort of
// thousands of jobs per round is what made fair share slow.
func giveRemainders(jobs []fsJob, open []int32, n int) {
	if n <= 0 {
		return
	}
	bucket := func(f float64) int { return min(max(int(f*remBuckets), 0), remBuckets-1) }
	var count [remBuckets]int
	for _, i := range open {
		count[bucket(jobs[i].frac)]++
	}
	cut, above := remBuckets-1, 0 // every job in a bucket above cut gets one
	for ; cut > 0 && above+count[cut] < n; cut-- {
		above += count[cut]
	}
	var edge []int32
	for _, i := range open {
		switch j := &jobs[i]; {
		case bucket(j.frac) > cut:
			if j.share < j.demand {
				j.share++
				n--
			}
		case bucket(j.frac) == cut:
			edge = append(edge, i)
		}
	}
	slices.SortStableFunc(edge, func(a, b int32) int {
		if c := cmp.Compare(jobs[b].frac, jobs[a].frac); c != 0 {
			return c
		}
		return cmp.Compare(jobs[a].rank, jobs[b].rank)
	})
	for _, i := range edge {
		if j := &jobs[i]; n > 0 && j.share < j.demand {
			j.share++
			n--
		}
	}
	for _, i := range open { // only if rounding left a share at its demand above
		if j := &jobs[i]; n > 0 && j.share < j.demand {
			j.share++
			n--
		}
	}
}
