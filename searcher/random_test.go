package searcher

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestMaxConcurrentTrials(t *testing.T) {
	tests := map[string]struct {
		cfg   expconf.SearcherConfig
		space expconf.Hyperparameters
		total int
	}{
		"random creates at most the limit, then one per exit": {
			cfg:   expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 7, MaxConcurrentTrials: 3},
			space: testSpace(), total: 7,
		},
		"grid creates at most the limit, then one per exit": {
			cfg:   expconf.SearcherConfig{Name: expconf.SearcherGrid, MaxConcurrentTrials: 4},
			space: gridSpace(), total: 24,
		},
		"asha creates at most the limit, then one per stop": {
			cfg: func() expconf.SearcherConfig {
				c := ashaCfg(expconf.ModeAggressive)
				c.MaxConcurrentTrials = 3
				return c
			}(),
			space: testSpace(), total: 16,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, tc.cfg, tc.space, 3)
			m := newSim(t, s, 64, 256)
			m.start()
			if got := count[Create](m.log); got != tc.cfg.MaxConcurrentTrials {
				t.Fatalf("Initial created %d trials, want %d", got, tc.cfg.MaxConcurrentTrials)
			}
			for m.next() {
				running := 0
				for _, id := range m.live {
					if !m.stopped[id] {
						running++
					}
				}
				if running > tc.cfg.MaxConcurrentTrials {
					t.Fatalf("%d trials training, limit %d", running, tc.cfg.MaxConcurrentTrials)
				}
			}
			if got := count[Create](m.log); got != tc.total || !m.done {
				t.Errorf("created %d trials (done=%t), want %d and a shutdown", got, m.done, tc.total)
			}
		})
	}
}

func TestExitReasons(t *testing.T) {
	single := expconf.SearcherConfig{Name: expconf.SearcherSingle}
	random := expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 2, MaxConcurrentTrials: 2}
	tests := map[string]struct {
		cfg     expconf.SearcherConfig
		exits   []ExitReason // for requests 1, 2, …
		creates int          // after Initial
		want    Action       // last action
	}{
		"a random search replaces an invalid-hp trial": {
			cfg: random, exits: []ExitReason{ExitInvalidHP, ExitCompleted, ExitCompleted}, creates: 1, want: Shutdown{},
		},
		"a single search does not replace an invalid-hp trial": {
			cfg: single, exits: []ExitReason{ExitInvalidHP}, want: Shutdown{},
		},
		"every trial errored fails the experiment": {
			cfg: random, exits: []ExitReason{ExitErrored, ExitErrored}, want: Shutdown{Failure: true},
		},
		"one trial completing keeps the experiment from failing": {
			cfg: random, exits: []ExitReason{ExitErrored, ExitCompleted}, want: Shutdown{},
		},
		"every trial canceled cancels the experiment": {
			cfg: single, exits: []ExitReason{ExitUserCanceled}, want: Shutdown{Cancel: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, tc.cfg, testSpace(), 1)
			s.Initial()
			var all []Action
			for i, r := range tc.exits {
				acts, err := s.TrialExited(RequestID(i+1), r)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, acts...)
			}
			if got := count[Create](all); got != tc.creates {
				t.Errorf("exits created %d trials, want %d", got, tc.creates)
			}
			if diff := cmp.Diff(tc.want, all[len(all)-1]); diff != "" {
				t.Errorf("last action (-want +got):\n%s", diff)
			}
			if !s.Done() || s.Progress() != 1 {
				t.Errorf("done=%t progress=%v after the shutdown", s.Done(), s.Progress())
			}
			if again, _ := s.TrialExited(1, ExitCompleted); again != nil {
				t.Errorf("a second exit gave %v", again)
			}
		})
	}
}

func TestRandomProgress(t *testing.T) {
	s := mustNew(t, expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 4, MaxConcurrentTrials: 2}, testSpace(), 1)
	s.Initial()
	if p := s.Progress(); p != 0 {
		t.Errorf("progress at start %v, want 0", p)
	}
	if err := s.ReportProgress(1, 0.5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrialExited(2, ExitCompleted); err != nil {
		t.Fatal(err)
	}
	// (0.5 + 1) of 4 trials.
	if p := s.Progress(); p != 0.375 {
		t.Errorf("progress %v, want 0.375", p)
	}
}
