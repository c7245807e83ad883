package searcher

import (
	"math"
	"slices"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

func intp(n int) *int { return &n }

// ashaCfg is the example of the tests: 16 trials, 16 at a time, up to 256
// batches, divisor 4, at most 3 rungs.
func ashaCfg(mode string) expconf.SearcherConfig {
	return expconf.SearcherConfig{
		Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
		MaxTrials: 16, MaxConcurrentTrials: 16, MaxTime: 256, TimeMetric: "batches",
		Mode: mode, Divisor: 4, MaxRungs: 3,
	}
}

func testSpace() expconf.Hyperparameters {
	return expconf.Hyperparameters{
		"lr":     {Type: expconf.HPLog, MinVal: -5, MaxVal: -1, Base: 10},
		"layers": {Type: expconf.HPInt, MinVal: 1, MaxVal: 8},
		"drop":   {Type: expconf.HPDouble, MinVal: 0, MaxVal: 0.5},
		"opt":    {Type: expconf.HPCategorical, Vals: []any{"adam", "sgd"}},
		"gbs":    {Type: expconf.HPConst, Val: 32},
		"model": {Type: expconf.HPNested, Nested: expconf.Hyperparameters{
			"width": {Type: expconf.HPInt, MinVal: 16, MaxVal: 64},
		}},
	}
}

// quality is a synthetic loss: best near lr 1e-3 with few dropouts.
func quality(hp map[string]any) float64 {
	lr, _ := hp["lr"].(float64)
	drop, _ := hp["drop"].(float64)
	return math.Abs(math.Log10(lr)+3) + drop
}

// sim drives a searcher like control/ would: it keeps the live trials, picks
// one per step in turn, and has it report a validation every chunk of the
// time metric (or exit once stopped). Failing says which trials error.
type sim struct {
	t       testing.TB
	s       *Searcher
	chunk   int
	maxTime int
	failing func(RequestID) bool

	live    []RequestID
	hps     map[RequestID]map[string]any
	elapsed map[RequestID]int
	stopped map[RequestID]bool
	log     []Action
	step    int
	done    bool
}

func newSim(t testing.TB, s *Searcher, chunk, maxTime int) *sim {
	m := &sim{
		t: t, s: s, chunk: chunk, maxTime: maxTime, failing: func(RequestID) bool { return false },
		hps: map[RequestID]map[string]any{}, elapsed: map[RequestID]int{}, stopped: map[RequestID]bool{},
	}
	return m
}

func (m *sim) apply(acts []Action) {
	m.log = append(m.log, acts...)
	for _, a := range acts {
		switch a := a.(type) {
		case Create:
			m.live = append(m.live, a.RequestID)
			m.hps[a.RequestID] = a.Hparams
		case Stop:
			m.stopped[a.RequestID] = true
		case Shutdown:
			m.done = true
		}
	}
}

func (m *sim) start() { m.apply(m.s.Initial()) }

// next runs one event; it returns false once the search is over.
func (m *sim) next() bool {
	if m.done || len(m.live) == 0 {
		return false
	}
	m.step++
	i := m.step % len(m.live)
	id := m.live[i]
	var acts []Action
	var err error
	switch {
	case m.stopped[id] || m.elapsed[id] >= m.maxTime:
		m.live = slices.Delete(m.live, i, i+1)
		acts, err = m.s.TrialExited(id, ExitCompleted)
	case m.failing(id) && m.elapsed[id] >= m.chunk:
		m.live = slices.Delete(m.live, i, i+1)
		acts, err = m.s.TrialExited(id, ExitErrored)
	default:
		m.elapsed[id] += m.chunk
		loss := quality(m.hps[id]) + 1/float64(m.elapsed[id])
		acts, err = m.s.ValidationReported(id, map[string]any{"loss": loss, "batches": m.elapsed[id]})
	}
	if err != nil {
		m.t.Fatalf("step %d, request %d: %v", m.step, id, err)
	}
	m.apply(acts)
	return true
}

func (m *sim) run(limit int) {
	for n := 0; n < limit && m.next(); n++ {
	}
}

func count[T Action](acts []Action) int {
	n := 0
	for _, a := range acts {
		if _, ok := a.(T); ok {
			n++
		}
	}
	return n
}

func mustNew(t testing.TB, cfg expconf.SearcherConfig, space expconf.Hyperparameters, seed uint32) *Searcher {
	t.Helper()
	s, err := New(cfg, space, seed)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}
