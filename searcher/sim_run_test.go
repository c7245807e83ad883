package searcher

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestASHASimulatedSearch(t *testing.T) {
	// Standard mode, 100 trials, 16 at a time; every 13th trial errors after
	// its first validation. Rungs: min(5, ⌊log 256/log 4⌋+1, ⌊log 100/log 4⌋+1)
	// = 4, so brackets of 4, 3 and 2 rungs.
	cfg := expconf.SearcherConfig{
		Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
		MaxTrials: 100, MaxConcurrentTrials: 16, MaxTime: 256, TimeMetric: "batches",
		Mode: expconf.ModeStandard, Divisor: 4, MaxRungs: 5,
	}
	s := mustNew(t, cfg, testSpace(), 42)
	m := newSim(t, s, 4, 256)
	failing := func(id RequestID) bool { return id%13 == 0 }
	m.failing = failing
	m.start()
	last := s.Progress()
	for steps := 0; m.next(); steps++ {
		if steps > 100000 {
			t.Fatal("the search did not end")
		}
		running := 0
		for _, id := range m.live {
			if !m.stopped[id] {
				running++
			}
		}
		if running > 16 {
			t.Fatalf("step %d: %d trials training, max_concurrent_trials is 16", steps, running)
		}
		p := s.Progress()
		if p < last {
			t.Fatalf("step %d: progress fell from %v to %v", steps, last, p)
		}
		last = p
	}
	if !m.done || len(m.live) != 0 {
		t.Fatalf("the search ended with done=%t and %d trials live", m.done, len(m.live))
	}
	if got := count[Create](m.log); got != 100 {
		t.Errorf("created %d trials, want 100", got)
	}
	if got := m.log[len(m.log)-1]; got != (Shutdown{}) {
		t.Errorf("last action %v, want Shutdown", got)
	}
	if last != 1 {
		t.Errorf("final progress %v, want 1", last)
	}
	perBracket := map[int][]RequestID{}
	for i, tr := range s.st.Trials {
		perBracket[tr.Bracket] = append(perBracket[tr.Bracket], RequestID(i+1))
	}
	for b, br := range s.st.Brackets {
		if got := len(perBracket[b]); got != br.MaxTrials {
			t.Errorf("bracket %d created %d trials, want %d", b, got, br.MaxTrials)
		}
		// The best trial of a bracket ranks first wherever it arrives, so it
		// reaches the top rung.
		ids := slices.DeleteFunc(slices.Clone(perBracket[b]), failing)
		best := slices.MinFunc(ids, func(x, y RequestID) int {
			return cmpFloat(quality(m.hps[x]), quality(m.hps[y]))
		})
		top := br.Rungs[br.NumRungs-1].Metrics
		if !slices.ContainsFunc(top, func(e rungEntry) bool { return e.Request == best }) {
			t.Errorf("bracket %d: the best trial %d did not reach the top rung", b, best)
		}
		prev := len(br.Rungs[0].Metrics)
		if prev != br.MaxTrials {
			t.Errorf("bracket %d: first rung judged %d trials, want %d", b, prev, br.MaxTrials)
		}
		for k, r := range br.Rungs {
			if len(r.Metrics) > prev {
				t.Errorf("bracket %d rung %d holds more trials than the rung below", b, k+1)
			}
			prev = len(r.Metrics)
			for _, e := range r.Metrics {
				if failing(e.Request) && (k == br.NumRungs-1 || (k > 0 && e.Metric != worstMetric)) {
					t.Errorf("bracket %d rung %d: errored trial %d was promoted", b, k+1, e.Request)
				}
			}
		}
		t.Logf("bracket %d (%d rungs): trials per rung %v", b, br.NumRungs, rungSizes(br))
	}
}

func rungSizes(b bracketState) []int {
	var out []int
	for _, r := range b.Rungs {
		out = append(out, len(r.Metrics))
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func gridSpace() expconf.Hyperparameters {
	return expconf.Hyperparameters{
		"lr":   {Type: expconf.HPLog, MinVal: -4, MaxVal: -1, Base: 10, Count: intp(4)},
		"drop": {Type: expconf.HPDouble, MinVal: 0, MaxVal: 0.5, Count: intp(3)},
		"opt":  {Type: expconf.HPCategorical, Vals: []any{"adam", "sgd"}},
	}
}

// searchers are one configuration of each searcher for the end-to-end tests.
func searchers() map[string]struct {
	cfg   expconf.SearcherConfig
	space expconf.Hyperparameters
} {
	type c = struct {
		cfg   expconf.SearcherConfig
		space expconf.Hyperparameters
	}
	asha := ashaCfg(expconf.ModeStandard)
	asha.MaxTrials, asha.MaxConcurrentTrials = 40, 6
	halving := ashaCfg("")
	halving.Name, halving.NumRungs, halving.MaxTrials, halving.MaxConcurrentTrials = expconf.SearcherAsyncHalving, 3, 30, 5
	return map[string]c{
		"single":        {expconf.SearcherConfig{Name: expconf.SearcherSingle, Metric: "loss", SmallerIsBetter: true}, testSpace()},
		"random":        {expconf.SearcherConfig{Name: expconf.SearcherRandom, Metric: "loss", MaxTrials: 20, MaxConcurrentTrials: 3}, testSpace()},
		"grid":          {expconf.SearcherConfig{Name: expconf.SearcherGrid, Metric: "loss", MaxConcurrentTrials: 5}, gridSpace()},
		"adaptive_asha": {asha, testSpace()},
		"async_halving": {halving, testSpace()},
	}
}

func runAll(t *testing.T, s *Searcher) *sim {
	m := newSim(t, s, 16, 256)
	m.failing = func(id RequestID) bool { return id%7 == 0 }
	m.start()
	m.run(100000)
	if !m.done {
		t.Fatal("the search did not end")
	}
	return m
}

func TestSnapshotRestoreContinuesTheSameSearch(t *testing.T) {
	for name, tc := range searchers() {
		t.Run(name, func(t *testing.T) {
			whole := runAll(t, mustNew(t, tc.cfg, tc.space, 99))
			half := whole.step / 2

			m := newSim(t, mustNew(t, tc.cfg, tc.space, 99), 16, 256)
			m.failing = whole.failing
			m.start()
			m.run(half)
			snap, err := m.s.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			m.s, err = Restore(tc.cfg, tc.space, snap)
			if err != nil {
				t.Fatal(err)
			}
			again, err := m.s.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(snap), string(again)); diff != "" {
				t.Errorf("snapshot after restore differs (-before +after):\n%s", diff)
			}
			m.run(100000)
			if diff := cmp.Diff(whole.log, m.log); diff != "" {
				t.Errorf("restored search differs from the uninterrupted one (-whole +restored):\n%s", diff)
			}
		})
	}
}

func TestSameSeedSameSearch(t *testing.T) {
	for name, tc := range searchers() {
		t.Run(name, func(t *testing.T) {
			a := runAll(t, mustNew(t, tc.cfg, tc.space, 5))
			b := runAll(t, mustNew(t, tc.cfg, tc.space, 5))
			if diff := cmp.Diff(a.log, b.log); diff != "" {
				t.Errorf("same seed, different actions (-a +b):\n%s", diff)
			}
			c := runAll(t, mustNew(t, tc.cfg, tc.space, 6))
			if cmp.Equal(a.log, c.log) {
				t.Error("seeds 5 and 6 gave identical actions (trial seeds should differ)")
			}
		})
	}
}

func TestRestoreRejectsAnotherSearch(t *testing.T) {
	s := mustNew(t, ashaCfg(expconf.ModeStandard), testSpace(), 1)
	s.Initial()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]expconf.SearcherConfig{
		"another searcher is refused":       {Name: expconf.SearcherRandom, MaxTrials: 3},
		"another bracket layout is refused": ashaCfg(expconf.ModeAggressive),
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Restore(cfg, testSpace(), snap); err == nil {
				t.Error("Restore succeeded, want an error")
			}
		})
	}
	if _, err := Restore(ashaCfg(expconf.ModeStandard), testSpace(), []byte("{")); err == nil {
		t.Error("Restore of broken JSON succeeded")
	}
}
