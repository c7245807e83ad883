package scheduler

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// Capacity modes: which slots of an agent a fit may count on.
const (
	capNow      = iota // free now
	capEventual        // free now, or held by a task that is being preempted
	capVictims         // as capEventual, plus the victims of a preemption attempt
)

// agentState is one agent's slots during a pass.
type agentState struct {
	id       string
	disabled bool
	slotIDs  []int
	used     []bool // by index into slotIDs: held by a task, or started in this pass
	size     int
	// free counts slots that are free and not yet given or promised to a
	// task in this pass. A promise (reserve) lowers free without marking
	// slots used: the slots are only counted, never named, until the task
	// really starts in a later pass.
	free int
	// pend counts slots held by tasks that are being preempted (already, or
	// by this pass) and not yet promised to a waiting task.
	pend int
	// releasing names the jobs whose preempted tasks hold pend slots here,
	// for waiting reasons.
	releasing []string
	// cand and candVictims are scratch for one preemption attempt.
	cand        int
	candVictims []int
}

// capacity is what an agent can offer a task in the given mode.
func (a *agentState) capacity(mode int) int {
	switch mode {
	case capNow:
		return a.free
	case capEventual:
		return a.free + a.pend
	default:
		return a.free + a.pend + a.cand
	}
}

// poolState is one pool's capacity during a pass: agents sorted by id, with
// the memos that keep failing fits cheap.
type poolState struct {
	name    string
	worst   bool // FitWorst
	agents  []agentState
	index   map[string]int // agent id → index into agents
	span    []int          // agents by size, largest first, then by id
	largest int
	total   int
	free    int // sum of agents' free
	pend    int // sum of agents' pend

	// Single-agent failures are monotone: during a pass every agent's
	// capacity in a mode only shrinks (capEventual grows only when victims
	// are chosen, which resets its memo), so once an n-slot task failed to
	// fit, every task needing n or more on one agent fails too. These hold
	// the smallest failed n (math.MaxInt: none).
	nowFail, evFail, preFail int
	// Spanning fits are not monotone in n; these list the n that failed.
	spanNowFail, spanEvFail, spanPreFail []int

	reachable []bool // lazily: which sums of whole agents exist
	scratch   []int
}

// newPoolState does step 1 for a pool: its agents, all slots free. The
// caller then marks the slots held by running tasks with hold.
func newPoolState(p *Pool) *poolState {
	ps := &poolState{
		name:    p.Name,
		worst:   p.Config.FittingPolicy == FitWorst,
		agents:  make([]agentState, len(p.Agents)),
		index:   make(map[string]int, len(p.Agents)),
		nowFail: math.MaxInt, evFail: math.MaxInt, preFail: math.MaxInt,
	}
	n := 0
	for _, a := range p.Agents {
		n += len(a.SlotIDs)
	}
	used := make([]bool, n)
	for i, a := range p.Agents {
		k := len(a.SlotIDs)
		ps.agents[i] = agentState{id: a.ID, disabled: a.Disabled, slotIDs: a.SlotIDs, used: used[:k:k], size: k, free: k}
		used = used[k:]
	}
	slices.SortStableFunc(ps.agents, func(a, b agentState) int { return cmp.Compare(a.id, b.id) })
	ps.span = make([]int, len(ps.agents))
	for i := range ps.agents {
		a := &ps.agents[i]
		if _, dup := ps.index[a.id]; !dup {
			ps.index[a.id] = i
		}
		ps.span[i] = i
		ps.total += a.size
		ps.free += a.size
		ps.largest = max(ps.largest, a.size)
	}
	slices.SortStableFunc(ps.span, func(x, y int) int { return cmp.Compare(ps.agents[y].size, ps.agents[x].size) })
	return ps
}

// hold marks the slots of a running task as taken; a task being preempted
// also adds them to its agents' pend. Slots of unknown agents are ignored.
func (p *poolState) hold(refs []SlotRef, preempting bool, job string) {
	for _, r := range refs {
		ai, ok := p.index[r.Agent]
		if !ok {
			continue
		}
		a := &p.agents[ai]
		for si, id := range a.slotIDs {
			if id != r.Slot || a.used[si] {
				continue
			}
			a.used[si] = true
			a.free--
			p.free--
			if preempting {
				a.pend++
				p.pend++
				if len(a.releasing) == 0 || a.releasing[len(a.releasing)-1] != job {
					a.releasing = append(a.releasing, job)
				}
			}
			break
		}
	}
}

// neverReason does step 4: it says why an n-slot task can never run in the
// pool, or "" when it could once enough slots are free.
func (p *poolState) neverReason(n int) string {
	if n <= p.largest {
		return ""
	}
	if n > p.total {
		return "can never run: needs " + slotWord(n) + "; pool " + p.name + " has " + strconv.Itoa(p.total)
	}
	if p.reachable == nil {
		// Subset sums of whole agents: a spanning task needs exactly n.
		p.reachable = make([]bool, p.total+1)
		p.reachable[0] = true
		for i := range p.agents {
			k := p.agents[i].size
			for s := p.total; s >= k; s-- {
				p.reachable[s] = p.reachable[s] || p.reachable[s-k]
			}
		}
	}
	if !p.reachable[n] {
		return "can never run: needs " + slotWord(n) + "; the largest agent of pool " + p.name +
			" has " + strconv.Itoa(p.largest)
	}
	return ""
}

// fit does step 3, gang admission: the agents an n-slot task gets in the
// given mode, or nil. A task that fits on one agent gets one agent chosen by
// the fitting policy (ties go to the lower agent id); a larger one gets
// whole agents, largest first, that add up to exactly n.
func (p *poolState) fit(n, mode int) []int {
	if n <= p.largest {
		best, bestCap := -1, 0
		for i := range p.agents {
			c := p.agents[i].capacity(mode)
			if c < n {
				continue
			}
			if best < 0 || (p.worst && c > bestCap) || (!p.worst && c < bestCap) {
				best, bestCap = i, c
			}
		}
		if best < 0 {
			return nil
		}
		p.scratch = append(p.scratch[:0], best)
		return p.scratch
	}
	return p.fitWhole(n, mode)
}

// fitWhole picks whole agents (every slot available in mode) that add up to
// exactly n: greedily, largest first, and if that misses, by subset sum.
func (p *poolState) fitWhole(n, mode int) []int {
	whole := p.scratch[:0]
	sum, acc := 0, 0
	for _, i := range p.span {
		a := &p.agents[i]
		if a.size == 0 || a.capacity(mode) != a.size {
			continue
		}
		whole = append(whole, i)
		sum += a.size
	}
	p.scratch = whole
	if sum < n {
		return nil
	}
	chosen := make([]int, 0, len(whole))
	for _, i := range whole {
		if k := p.agents[i].size; acc+k <= n {
			chosen = append(chosen, i)
			acc += k
		}
	}
	if acc == n {
		return chosen
	}
	// Heterogeneous agents: an exact subset may still exist.
	from := make([]int, n+1) // from[s]: 1 + index into whole of the agent that first reached s
	from[0] = -1
	for wi, i := range whole {
		k := p.agents[i].size
		for s := n; s >= k; s-- {
			if from[s] == 0 && from[s-k] != 0 {
				from[s] = wi + 1
			}
		}
	}
	if from[n] == 0 {
		return nil
	}
	chosen = chosen[:0]
	for s := n; s > 0; {
		i := whole[from[s]-1]
		chosen = append(chosen, i)
		s -= p.agents[i].size
	}
	slices.SortFunc(chosen, func(x, y int) int { return cmp.Compare(slices.Index(p.span, x), slices.Index(p.span, y)) })
	return chosen
}

// start gives n slots on the agents fit chose to a starting task and names
// them: the lowest free slot ids of one agent, or every slot of each.
func (p *poolState) start(agents []int, n int) []SlotRef {
	refs := make([]SlotRef, 0, n)
	for _, ai := range agents {
		a := &p.agents[ai]
		want := min(n-len(refs), a.free)
		a.free -= want
		p.free -= want
		for si := 0; want > 0 && si < len(a.used); si++ {
			if !a.used[si] {
				a.used[si] = true
				refs = append(refs, SlotRef{Agent: a.id, Slot: a.slotIDs[si]})
				want--
			}
		}
	}
	return refs
}

// reserve promises n slots on the agents fit chose in capEventual mode to a
// task that must wait for preempted tasks to exit: free slots first (so
// nothing smaller slips into them), then slots being released. It returns
// the jobs being waited for.
func (p *poolState) reserve(agents []int, n int) []string {
	var jobs []string
	for _, ai := range agents {
		a := &p.agents[ai]
		f := min(a.free, n)
		a.free -= f
		p.free -= f
		n -= f
		if r := min(a.pend, n); r > 0 {
			a.pend -= r
			p.pend -= r
			n -= r
			for _, j := range a.releasing {
				if !slices.Contains(jobs, j) {
					jobs = append(jobs, j)
				}
			}
		}
	}
	return jobs
}

// failed reports whether an n-slot fit in the given memo is known to fail.
func failed(n, single int, spans []int, isSingle bool) bool {
	if isSingle {
		return n >= single
	}
	return slices.Contains(spans, n)
}

// slotWord is "1 slot" or "n slots".
func slotWord(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return strconv.Itoa(n) + " slots"
}
