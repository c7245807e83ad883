package searcher

import (
	"math"
	"slices"
	"sort"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// worstMetric is what an errored or canceled trial counts as in the rung it
// was working toward: worse than any real metric (metrics are kept so that
// smaller is better).
const worstMetric = math.MaxFloat64

// Defaults of Determined's adaptive_asha, used when the config leaves them 0.
const (
	defaultDivisor  = 4
	defaultMaxRungs = 5
)

// bracketState is one bracket of an ASHA search: its own rungs, its own share
// of max_trials and max_concurrent_trials.
type bracketState struct {
	NumRungs      int         `json:"num_rungs"`
	MaxTrials     int         `json:"max_trials"`
	MaxConcurrent int         `json:"max_concurrent"`
	Rungs         []rungState `json:"rungs"`
	Created       int         `json:"created"`
	Invalid       int         `json:"invalid"`
	Completed     int         `json:"completed"`
}

// rungState is one rung: the time_metric value a trial must reach to be judged
// there, and the metrics of the trials judged so far, best first.
type rungState struct {
	Target  uint64      `json:"target"`
	Metrics []rungEntry `json:"metrics"`
}

type rungEntry struct {
	Request RequestID `json:"request"`
	Metric  float64   `json:"metric"`
}

// insert adds a metric in order and returns its place. A new metric goes
// before equal ones, as in Determined.
func (r *rungState) insert(id RequestID, metric float64) int {
	i := sort.Search(len(r.Metrics), func(i int) bool { return r.Metrics[i].Metric >= metric })
	r.Metrics = slices.Insert(r.Metrics, i, rungEntry{Request: id, Metric: metric})
	return i
}

func (r *rungState) remove(id RequestID) {
	r.Metrics = slices.DeleteFunc(r.Metrics, func(e rungEntry) bool { return e.Request == id })
}

// ashaParams are the ASHA fields of the config after defaults.
type ashaParams struct {
	timeMetric string
	maxTime    int
	divisor    float64
}

// ashaConfig applies Determined's defaults and validates the ASHA fields. The
// deprecated max_length stands in for time_metric/max_time when they are
// absent, its unit being the time metric.
func ashaConfig(cfg expconf.SearcherConfig) (ashaParams, error) {
	p := ashaParams{timeMetric: cfg.TimeMetric, maxTime: cfg.MaxTime, divisor: cfg.Divisor}
	if p.timeMetric == "" && p.maxTime == 0 && cfg.MaxLength != nil {
		p.timeMetric, p.maxTime = cfg.MaxLength.Unit, cfg.MaxLength.Units
	}
	if p.divisor == 0 {
		p.divisor = defaultDivisor
	}
	bad := func(msg string) (ashaParams, error) {
		return ashaParams{}, resolute.Errorf(resolute.EInvalid, "searcher: %s", msg)
	}
	switch {
	case cfg.Metric == "":
		return bad("metric is required")
	case p.timeMetric == "":
		return bad("time_metric is required")
	case p.maxTime < 1:
		return bad("max_time must be at least 1")
	case cfg.MaxTrials < 1:
		return bad("max_trials must be at least 1")
	case !(p.divisor > 1) || math.IsInf(p.divisor, 0):
		return bad("divisor must be greater than 1")
	case cfg.MaxRungs < 0:
		return bad("max_rungs must be at least 1")
	}
	return p, nil
}

// layout returns the brackets of the search before any trial runs.
//
// adaptive_asha, like Determined: maxRungs = min(max_rungs,
// ⌊log(max_time)/log(divisor)⌋+1, ⌊log(max_trials)/log(divisor)⌋+1); the
// mode lists rung counts — aggressive [maxRungs], standard
// [⌊(maxRungs-1)/2⌋+1 … maxRungs], conservative [1 … maxRungs] — unless
// bracket_rungs is given; brackets are ordered by rung count, most first.
// Bracket i with n rungs weighs divisor^(n-1)/n and gets
// max(⌊weight/total·max_trials⌋, 1) trials, the first bracket taking the
// remainder. max_concurrent_trials c (at least one per bracket) is split as
// ⌊c/brackets⌋ each, the first c mod brackets brackets taking one more; with
// no limit, each bracket runs max(last bracket's trials, ⌊divisor⌋).
//
// async_halving is one bracket of num_rungs with max_trials and
// max_concurrent_trials.
//
// Rung k (from 0) of a bracket with n rungs targets
// max(⌊max_time/divisor^(n-k-1)⌋, 1) units of time_metric.
func layout(cfg expconf.SearcherConfig, p ashaParams) ([]bracketState, error) {
	var rungCounts, trials, concurrent []int
	if cfg.Name == expconf.SearcherAsyncHalving {
		if cfg.NumRungs < 1 {
			return nil, resolute.Errorf(resolute.EInvalid, "searcher: num_rungs must be at least 1")
		}
		rungCounts, trials, concurrent = []int{cfg.NumRungs}, []int{cfg.MaxTrials}, []int{cfg.MaxConcurrentTrials}
	} else {
		rungCounts = slices.Clone(cfg.BracketRungs)
		for _, n := range rungCounts {
			if n < 1 {
				return nil, resolute.Errorf(resolute.EInvalid, "searcher: bracket_rungs must be at least 1")
			}
		}
		if len(rungCounts) == 0 {
			maxRungs := cfg.MaxRungs
			if maxRungs == 0 {
				maxRungs = defaultMaxRungs
			}
			maxRungs = min(maxRungs,
				int(math.Log(float64(p.maxTime))/math.Log(p.divisor))+1,
				int(math.Log(float64(cfg.MaxTrials))/math.Log(p.divisor))+1)
			switch cfg.Mode {
			case expconf.ModeAggressive:
				rungCounts = []int{maxRungs}
			case expconf.ModeStandard, "":
				for n := (maxRungs-1)/2 + 1; n <= maxRungs; n++ {
					rungCounts = append(rungCounts, n)
				}
			case expconf.ModeConservative:
				for n := 1; n <= maxRungs; n++ {
					rungCounts = append(rungCounts, n)
				}
			default:
				return nil, resolute.Errorf(resolute.EInvalid, "searcher: unknown mode %q", cfg.Mode)
			}
		}
		slices.SortFunc(rungCounts, func(a, b int) int { return b - a })
		trials = bracketTrials(cfg.MaxTrials, p.divisor, rungCounts)
		concurrent = bracketConcurrency(cfg.MaxConcurrentTrials, p.divisor, trials)
	}
	brackets := make([]bracketState, len(rungCounts))
	for i, n := range rungCounts {
		b := bracketState{NumRungs: n, MaxTrials: trials[i], MaxConcurrent: concurrent[i]}
		for k := range n {
			target := uint64(float64(p.maxTime) / math.Pow(p.divisor, float64(n-k-1)))
			b.Rungs = append(b.Rungs, rungState{Target: max(target, 1)})
		}
		brackets[i] = b
	}
	return brackets, nil
}

func bracketTrials(maxTrials int, divisor float64, rungCounts []int) []int {
	weights := make([]float64, len(rungCounts))
	total := 0.0
	for i, n := range rungCounts {
		weights[i] = math.Pow(divisor, float64(n-1)) / float64(n)
		total += weights[i]
	}
	out := make([]int, len(rungCounts))
	allocated := 0
	for i, w := range weights {
		out[i] = max(int(w/total*float64(maxTrials)), 1)
		allocated += out[i]
	}
	out[0] += max(maxTrials-allocated, 0)
	return out
}

func bracketConcurrency(maxConcurrent int, divisor float64, trials []int) []int {
	n := len(trials)
	out := make([]int, n)
	if maxConcurrent == 0 {
		for i := range out {
			out[i] = max(trials[n-1], int(divisor))
		}
		return out
	}
	maxConcurrent = max(maxConcurrent, n)
	for i := range out {
		out[i] = maxConcurrent / n
		if i < maxConcurrent%n {
			out[i]++
		}
	}
	return out
}

// ashaSearch is Determined 0.38's early-stopping ASHA: every trial trains
// toward max_time; when it reports a time_metric at or past the target of
// the rung it is working toward, its metric joins that rung, and it keeps
// training only while it ranks within the top max(⌊n/divisor⌋, 1) of the n
// metrics the rung holds so far. Otherwise (and at the top rung) it is
// stopped, and its bracket creates another trial while it has trials left.
type ashaSearch struct {
	ashaParams
	smallerIsBetter bool
}

func newASHA(s *Searcher) (method, error) {
	p, err := ashaConfig(s.cfg)
	if err != nil {
		return nil, err
	}
	if s.st.Brackets, err = layout(s.cfg, p); err != nil {
		return nil, err
	}
	if err := validateSpace(s.space, false); err != nil {
		return nil, err
	}
	return ashaSearch{ashaParams: p, smallerIsBetter: s.cfg.SmallerIsBetter}, nil
}

func (a ashaSearch) initial(s *Searcher) []Action {
	var acts []Action
	for i := range s.st.Brackets {
		for range a.initialCount(s.st.Brackets[i]) {
			acts = append(acts, a.create(s, i))
		}
	}
	return acts
}

// initialCount is how many trials a bracket starts: its share of
// max_concurrent_trials, or with no limit (async_halving only) enough for one
// trial to reach the top rung, divisor^(rungs-1); never more than its trials.
func (a ashaSearch) initialCount(b bracketState) int {
	if b.MaxConcurrent > 0 {
		return min(b.MaxConcurrent, b.MaxTrials)
	}
	return min(max(int(math.Pow(a.divisor, float64(b.NumRungs-1))), 1), b.MaxTrials)
}

func (ashaSearch) create(s *Searcher, bracket int) Action {
	s.st.Brackets[bracket].Created++
	return s.create(bracket, sampleSpace(s.space, s.rng))
}

// replace creates a trial in the bracket if it has trials left to create.
func (a ashaSearch) replace(s *Searcher, bracket int) []Action {
	b := &s.st.Brackets[bracket]
	if b.Created-b.Invalid >= b.MaxTrials {
		return nil
	}
	return []Action{a.create(s, bracket)}
}

func (a ashaSearch) validation(s *Searcher, id RequestID, metrics map[string]any) ([]Action, error) {
	value, err := number(metrics, s.cfg.Metric, "metric")
	if err != nil {
		return nil, err
	}
	elapsed, err := number(metrics, a.timeMetric, "time_metric")
	if err != nil {
		return nil, err
	}
	if !(elapsed >= 0) {
		return nil, resolute.Errorf(resolute.EInvalid, "searcher time_metric %q must not be negative", a.timeMetric)
	}
	t := &s.st.Trials[id-1]
	b := &s.st.Brackets[t.Bracket]
	units, metric := uint64(min(elapsed, math.MaxUint64/2)), a.rankable(value)
	// A validation can cover several rungs at once: walk up until the trial
	// falls short of a target or is stopped.
	for r := t.Rung; r < b.NumRungs; r++ {
		t.Rung = r
		rung := &b.Rungs[r]
		if units < rung.Target {
			return nil, nil
		}
		place := rung.insert(id, metric)
		keep := max(int(float64(len(rung.Metrics))/a.divisor), 1)
		if r == b.NumRungs-1 || place >= keep {
			break
		}
	}
	t.Stopped = true
	return append([]Action{Stop{RequestID: id}}, a.replace(s, t.Bracket)...), nil
}

// rankable turns a metric into one where smaller is better and that JSON can
// hold: NaN ranks worst, infinities become the largest finite values.
func (a ashaSearch) rankable(v float64) float64 {
	if !a.smallerIsBetter {
		v = -v
	}
	switch {
	case math.IsNaN(v):
		return worstMetric
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}

// exited follows Determined's early exits: an invalid-hp trial leaves every
// rung and is always replaced; an errored or canceled trial that was still
// training counts as the worst metric of the rung it was working toward and
// is replaced while the bracket has trials left. A trial that completes
// without a Stop (it chose to train less than max_time) is replaced too, so
// the search still creates max_trials trials.
func (a ashaSearch) exited(s *Searcher, id RequestID, reason ExitReason) []Action {
	t := &s.st.Trials[id-1]
	b := &s.st.Brackets[t.Bracket]
	b.Completed++
	switch {
	case reason == ExitInvalidHP:
		t.Invalid = true
		b.Invalid++
		for r := 0; r <= t.Rung; r++ {
			b.Rungs[r].remove(id)
		}
		return []Action{a.create(s, t.Bracket)}
	case t.Stopped:
		return nil
	case reason == ExitErrored || reason == ExitUserCanceled:
		b.Rungs[t.Rung].insert(id, worstMetric)
	}
	t.Stopped = true
	return a.replace(s, t.Bracket)
}

// progress is Determined's: per bracket, the trials judged at the first rung
// over 1.2·max_trials, or once all were judged, at least the share of valid
// trials that exited; averaged over brackets.
func (ashaSearch) progress(s *Searcher) float64 {
	sum := 0.0
	for _, b := range s.st.Brackets {
		judged := float64(len(b.Rungs[0].Metrics))
		p := judged / (1.2 * float64(b.MaxTrials))
		if int(judged) >= b.MaxTrials {
			p = max(p, float64(b.Completed-b.Invalid)/float64(b.MaxTrials))
		}
		sum += p
	}
	return sum / float64(len(s.st.Brackets))
}
