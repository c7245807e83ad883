package searcher

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resolute-ml/resolute/expconf"
)

func report(loss float64, batches int) map[string]any {
	return map[string]any{"loss": loss, "batches": batches}
}

func TestASHADecisions(t *testing.T) {
	// One bracket of 3 rungs at 16, 64 and 256 batches; all 16 trials start
	// at once, so no stop creates another. A trial keeps training while it
	// ranks within the top max(⌊n/4⌋, 1) of the n metrics of its rung.
	s := mustNew(t, ashaCfg(expconf.ModeAggressive), testSpace(), 7)
	if got := count[Create](s.Initial()); got != 16 {
		t.Fatalf("Initial created %d trials, want 16", got)
	}
	steps := []struct {
		id      RequestID
		loss    float64
		batches int
		want    []Action
	}{
		{1, 0.5, 8, nil},                    // below the first rung's 16
		{1, 0.5, 16, nil},                   // rung 1 [.5]: keep 1, 1st → promoted
		{2, 0.6, 16, []Action{Stop{2}}},     // [.5 .6]: keep 1, 2nd
		{3, 0.4, 20, nil},                   // [.4 .5 .6]: 1st
		{4, 0.45, 16, []Action{Stop{4}}},    // 4 metrics: keep 1, 2nd
		{5, 0.7, 16, []Action{Stop{5}}},     // 5 metrics: keep 1, 5th
		{6, 0.1, 16, nil},                   // 1st
		{7, 0.42, 16, []Action{Stop{7}}},    // 7 metrics: keep 1, 3rd
		{8, 0.41, 16, []Action{Stop{8}}},    // 8 metrics: keep 2, 3rd
		{9, 0.2, 16, nil},                   // 9 metrics: keep 2, 2nd
		{1, 0.3, 64, nil},                   // rung 2 [.3]: promoted
		{3, 0.35, 300, []Action{Stop{3}}},   // rung 2 [.3 .35]: keep 1, 2nd
		{6, 0.05, 256, []Action{Stop{6}}},   // rung 2 1st, then the top rung: done
		{2, 0.01, 64, nil},                  // stopped already: ignored
		{10, 0.9, 1000, []Action{Stop{10}}}, // 10 metrics: keep 2, 10th
		{11, 0.0, 1000, []Action{Stop{11}}}, // best everywhere, up to the top
	}
	for i, st := range steps {
		got, err := s.ValidationReported(st.id, report(st.loss, st.batches))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("step %d (request %d, loss %v at %d): actions (-want +got):\n%s",
				i, st.id, st.loss, st.batches, diff)
		}
	}
	want := [][]RequestID{{11, 6, 9, 3, 8, 7, 4, 1, 2, 5, 10}, {11, 6, 1, 3}, {11, 6}}
	var got [][]RequestID
	for _, r := range s.st.Brackets[0].Rungs {
		var ids []RequestID
		for _, e := range r.Metrics {
			ids = append(ids, e.Request)
		}
		got = append(got, ids)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rungs (-want +got):\n%s", diff)
	}
}

func TestASHAStopCreatesReplacement(t *testing.T) {
	cfg := ashaCfg(expconf.ModeAggressive)
	cfg.MaxConcurrentTrials = 2
	s := mustNew(t, cfg, testSpace(), 7)
	if got := count[Create](s.Initial()); got != 2 {
		t.Fatalf("Initial created %d trials, want 2", got)
	}
	mustReport(t, s, 1, 0.5, 16)
	acts := mustReport(t, s, 2, 0.6, 16)
	if len(acts) != 2 || acts[0] != (Stop{2}) || acts[1].(Create).RequestID != 3 {
		t.Errorf("a stop below the budget gave %v, want Stop(2) then Create(3)", acts)
	}
}

func TestASHALargerIsBetter(t *testing.T) {
	cfg := ashaCfg(expconf.ModeAggressive)
	cfg.SmallerIsBetter = false
	s := mustNew(t, cfg, testSpace(), 7)
	s.Initial()
	mustReport(t, s, 1, 0.5, 16)
	if got := mustReport(t, s, 2, 0.9, 16); len(got) != 0 {
		t.Errorf("a larger accuracy was stopped: %v", got)
	}
	if got := mustReport(t, s, 3, 0.1, 16); !slices.Contains(got, Action(Stop{3})) {
		t.Errorf("a smaller accuracy was not stopped: %v", got)
	}
}

func TestASHAMetricErrors(t *testing.T) {
	tests := map[string]map[string]any{
		"a missing searcher metric is an error":     {"batches": 16},
		"a missing time metric is an error":         {"loss": 0.5},
		"a metric that is not a number is an error": {"loss": "low", "batches": 16},
		"a negative time metric is an error":        {"loss": 0.5, "batches": -1},
	}
	for name, metrics := range tests {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, ashaCfg(expconf.ModeAggressive), testSpace(), 7)
			s.Initial()
			if _, err := s.ValidationReported(1, metrics); err == nil {
				t.Error("ValidationReported succeeded, want an error")
			}
		})
	}
	s := mustNew(t, ashaCfg(expconf.ModeAggressive), testSpace(), 7)
	s.Initial()
	if _, err := s.ValidationReported(99, report(0.5, 16)); err == nil {
		t.Error("a request the searcher never created was accepted")
	}
	if _, err := s.TrialExited(1, "vanished"); err == nil {
		t.Error("an unknown exit reason was accepted")
	}
}

func TestASHAErroredTrialIsNotPromoted(t *testing.T) {
	cfg := ashaCfg(expconf.ModeAggressive)
	cfg.MaxConcurrentTrials = 2
	s := mustNew(t, cfg, testSpace(), 7)
	s.Initial()
	// Request 1 leads rung 1, then errors on its way to rung 2: it counts as
	// the worst metric there, is replaced, and is never trained further.
	mustReport(t, s, 1, 0.1, 16)
	acts, err := s.TrialExited(1, ExitErrored)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 1 || acts[0].(Create).RequestID != 3 {
		t.Fatalf("the errored trial gave %v, want Create(3)", acts)
	}
	if got := mustReport(t, s, 1, 0.0, 256); got != nil {
		t.Errorf("a report after the error gave %v, want nothing", got)
	}
	// Request 2 passes rung 1 and reaches rung 2 ahead of the errored
	// trial's worst metric: with two metrics it must be first, and it is.
	if got := mustReport(t, s, 2, 0.05, 16); got != nil {
		t.Errorf("request 2 at rung 1 gave %v, want a promotion", got)
	}
	if got := mustReport(t, s, 2, 0.9, 64); got != nil {
		t.Errorf("request 2 at rung 2 gave %v, want a promotion", got)
	}
	rung2 := s.st.Brackets[0].Rungs[1].Metrics
	want := []rungEntry{{Request: 2, Metric: 0.9}, {Request: 1, Metric: worstMetric}}
	if diff := cmp.Diff(want, rung2); diff != "" {
		t.Errorf("rung 2 (-want +got):\n%s", diff)
	}
	for _, e := range s.st.Brackets[0].Rungs[2].Metrics {
		if e.Request == 1 {
			t.Error("the errored trial reached the top rung")
		}
	}
}

func TestASHAInvalidHPLeavesTheRungs(t *testing.T) {
	cfg := ashaCfg(expconf.ModeAggressive)
	cfg.MaxConcurrentTrials = 2
	s := mustNew(t, cfg, testSpace(), 7)
	s.Initial()
	mustReport(t, s, 1, 0.1, 16)
	acts, err := s.TrialExited(1, ExitInvalidHP)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 1 || acts[0].(Create).RequestID != 3 {
		t.Fatalf("the invalid-hp trial gave %v, want Create(3)", acts)
	}
	if n := len(s.st.Brackets[0].Rungs[0].Metrics); n != 0 {
		t.Errorf("rung 1 holds %d metrics after the invalid-hp exit, want 0", n)
	}
}

func TestASHAHundredTrialsPromoteTheBest(t *testing.T) {
	// One bracket of 100 trials, all at once; max_time 100 and divisor 4 give
	// min(5, ⌊3.32⌋+1, ⌊3.32⌋+1) = 4 rungs at ⌊100/64⌋ = 1, ⌊100/16⌋ = 6,
	// 25 and 100 batches. At each rung the best max(⌊n/4⌋, 1) report first
	// (each the best so far, so kept) and the rest after (each ranked past
	// max(⌊n/4⌋, 1), so stopped): 100 → 25 → 6 → 1 trials per rung.
	cfg := expconf.SearcherConfig{
		Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
		MaxTrials: 100, MaxConcurrentTrials: 100, MaxTime: 100, TimeMetric: "batches",
		Mode: expconf.ModeAggressive, Divisor: 4, MaxRungs: 5,
	}
	s := mustNew(t, cfg, testSpace(), 3)
	if got := count[Create](s.Initial()); got != 100 {
		t.Fatalf("Initial created %d trials, want 100", got)
	}
	// Losses are a permutation of 1..100 over the requests.
	loss := func(id RequestID) float64 { return float64(int(id)*37%101) / 101 }
	byLoss := func(ids []RequestID) []RequestID {
		out := slices.Clone(ids)
		slices.SortFunc(out, func(a, b RequestID) int {
			if loss(a) < loss(b) {
				return -1
			}
			return 1
		})
		return out
	}
	var cohort []RequestID
	for id := RequestID(1); id <= 100; id++ {
		cohort = append(cohort, id)
	}
	targets := []int{1, 6, 25, 100}
	wantPerRung := []int{100, 25, 6, 1}
	for r, target := range targets {
		if len(cohort) != wantPerRung[r] {
			t.Fatalf("rung %d: %d trials arrived, want %d", r+1, len(cohort), wantPerRung[r])
		}
		best := byLoss(cohort)
		keep := max(len(cohort)/4, 1)
		if r == len(targets)-1 {
			keep = 0 // the top rung stops everyone
		}
		order := slices.Clone(best[:keep])
		slices.Reverse(order)
		order = append(order, best[keep:]...)
		var next []RequestID
		for _, id := range order {
			acts := mustReport(t, s, id, loss(id), target)
			if !slices.Contains(acts, Action(Stop{id})) {
				next = append(next, id)
			}
			if count[Create](acts) != 0 {
				t.Fatalf("rung %d: request %d created a trial past max_trials", r+1, id)
			}
		}
		slices.Sort(next)
		wantNext := slices.Clone(best[:keep])
		slices.Sort(wantNext)
		if diff := cmp.Diff(wantNext, next, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("rung %d promoted (-want +got):\n%s", r+1, diff)
		}
		if n := len(s.st.Brackets[0].Rungs[r].Metrics); n != wantPerRung[r] {
			t.Errorf("rung %d holds %d metrics, want %d", r+1, n, wantPerRung[r])
		}
		cohort = next
		if r == len(targets)-2 && (len(next) != 1 || next[0] != best[0]) {
			t.Errorf("the top rung got %v, want the best trial %d", next, best[0])
		}
	}
	for id := RequestID(1); id <= 100; id++ {
		acts, err := s.TrialExited(id, ExitCompleted)
		if err != nil {
			t.Fatal(err)
		}
		want := []Action(nil)
		if id == 100 {
			want = []Action{Shutdown{}}
		}
		if diff := cmp.Diff(want, acts); diff != "" {
			t.Fatalf("exit of %d (-want +got):\n%s", id, diff)
		}
	}
	if p := s.Progress(); p != 1 {
		t.Errorf("progress after shutdown is %v, want 1", p)
	}
}

func mustReport(t *testing.T, s *Searcher, id RequestID, loss float64, batches int) []Action {
	t.Helper()
	acts, err := s.ValidationReported(id, report(loss, batches))
	if err != nil {
		t.Fatalf("request %d: %v", id, err)
	}
	return acts
}
