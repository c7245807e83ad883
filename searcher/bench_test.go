package searcher

import (
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

// BenchmarkASHAValidation measures one ASHA decision per reported validation
// in a search of 1,000 trials, 100 at a time: every iteration is one trial
// reporting at the first rung's target, which ranks it among up to 1,000
// metrics and promotes it, or stops it and samples the trial that replaces
// it. The target is under 50µs per decision.
func BenchmarkASHAValidation(b *testing.B) {
	cfg := expconf.SearcherConfig{
		Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
		MaxTrials: 1000, MaxConcurrentTrials: 100, MaxTime: 1024, TimeMetric: "batches",
		Mode: expconf.ModeAggressive, Divisor: 4, MaxRungs: 5,
	}
	const trials = 1000
	metrics := make([]map[string]any, trials+1)
	for id := 1; id <= trials; id++ {
		// A permutation of the losses, so arrivals rank all over the rung.
		metrics[id] = map[string]any{"loss": float64(id*389%1009) / 1009, "batches": 4}
	}
	fresh := func() *Searcher {
		s, err := New(cfg, testSpace(), 1)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(s.Initial()); n != 100 {
			b.Fatalf("Initial created %d trials, want 100", n)
		}
		return s
	}
	s, next := fresh(), 1
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// Promoted trials create nobody, so the created trials may run out
		// before all 1,000 have reported.
		if next > len(s.st.Trials) {
			b.StopTimer()
			s, next = fresh(), 1
			b.StartTimer()
		}
		if _, err := s.ValidationReported(RequestID(next), metrics[next]); err != nil {
			b.Fatal(err)
		}
		next++
	}
}
