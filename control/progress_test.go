package control

import (
	"math"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// TestExperimentProgressCountsRunningTrials runs each searcher through
// TrialFraction as the master does on a trial's report: the experiment's
// progress is the searcher's, weighted as Determined weighs it.
func TestExperimentProgressCountsRunningTrials(t *testing.T) {
	batches := func(n int) *expconf.Length { return &expconf.Length{Unit: expconf.UnitBatches, Units: n} }
	space := expconf.Hyperparameters{
		"lr": {Type: expconf.HPDouble, MinVal: 0.001, MaxVal: 0.1, Count: intPtr(2)},
	}
	type report struct {
		trial    searcher.RequestID
		reported float64
		batches  int64
	}
	tests := map[string]struct {
		cfg     expconf.SearcherConfig
		reports []report
		exited  []searcher.RequestID
		want    float64
	}{
		"a single trial at 575 of 600 batches that reports no progress is 575/600 through": {
			cfg:     expconf.SearcherConfig{Name: expconf.SearcherSingle, MaxTrials: 1, MaxLength: batches(600)},
			reports: []report{{1, 0, 575}},
			want:    575.0 / 600,
		},
		"a single trial's own report counts when it is ahead of its batches": {
			cfg:     expconf.SearcherConfig{Name: expconf.SearcherSingle, MaxTrials: 1, MaxLength: batches(600)},
			reports: []report{{1, 0.5, 100}},
			want:    0.5,
		},
		"two random trials at 32% and 45% of two are at their mean": {
			cfg:     expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 2, MaxConcurrentTrials: 2},
			reports: []report{{1, 0.32, 0}, {2, 0.45, 0}},
			want:    (0.32 + 0.45) / 2,
		},
		"random averages over max_trials, counting an exited trial whole": {
			cfg:     expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 4, MaxConcurrentTrials: 2},
			reports: []report{{1, 0.5, 0}},
			exited:  []searcher.RequestID{2},
			want:    (0.5 + 1) / 4,
		},
		"grid averages over its points": {
			cfg:     expconf.SearcherConfig{Name: expconf.SearcherGrid, MaxConcurrentTrials: 2},
			reports: []report{{1, 0.25, 0}, {2, 0.75, 0}},
			want:    (0.25 + 0.75) / 2,
		},
		"ASHA is the searcher's: running trials judged at no rung count nothing yet": {
			cfg: expconf.SearcherConfig{Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
				MaxTrials: 4, MaxConcurrentTrials: 4, MaxTime: 64, TimeMetric: "batches", Mode: expconf.ModeAggressive, Divisor: 4, MaxRungs: 2},
			reports: []report{{1, 0.4, 0}, {2, 0.9, 0}},
			want:    0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := searcher.New(tc.cfg, space, 7)
			if err != nil {
				t.Fatal(err)
			}
			s.Initial()
			for _, r := range tc.reports {
				if err := s.ReportProgress(r.trial, TrialFraction(r.reported, r.batches, tc.cfg.MaxLength)); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tc.exited {
				if _, err := s.TrialExited(id, searcher.ExitCompleted); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.Progress(); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("progress %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTrialFraction(t *testing.T) {
	tests := map[string]struct {
		reported float64
		batches  int64
		target   *expconf.Length
		want     float64
	}{
		"a reported progress stands when there is no target": {reported: 0.3, batches: 500, want: 0.3},
		"batches over a target in batches":                   {batches: 150, target: &expconf.Length{Unit: expconf.UnitBatches, Units: 600}, want: 0.25},
		"a unitless target counts batches":                   {batches: 60, target: &expconf.Length{Units: 600}, want: 0.1},
		"a target in epochs cannot be read from batches":     {batches: 60, target: &expconf.Length{Unit: expconf.UnitEpochs, Units: 2}, want: 0},
		"batches past the target are whole":                  {batches: 700, target: &expconf.Length{Unit: expconf.UnitBatches, Units: 600}, want: 1},
		"the larger of report and batches counts":            {reported: 0.5, batches: 60, target: &expconf.Length{Unit: expconf.UnitBatches, Units: 600}, want: 0.5},
		"a NaN report counts nothing":                        {reported: math.NaN(), want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := TrialFraction(tc.reported, tc.batches, tc.target); got != tc.want {
				t.Errorf("TrialFraction = %v, want %v", got, tc.want)
			}
		})
	}
}

func intPtr(n int) *int { return &n }
