package searcher

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestPlanString(t *testing.T) {
	tests := map[string]struct {
		cfg   expconf.SearcherConfig
		space expconf.Hyperparameters
		want  string
	}{
		"an asha plan lists brackets and rungs": {
			cfg: ashaCfg(expconf.ModeStandard), space: testSpace(),
			want: `Searcher: adaptive_asha
Metric: loss (smaller is better)
Trials: 16, at most 12 at a time
Each trial trains up to 256 batches.

BRACKET  RUNGS  TRIALS  CONCURRENT
1        3      12      8
2        2      4       8

Bracket 1
RUNG  TRIALS  BATCHES
1     12      16
2     3       64
3     1       256

Bracket 2
RUNG  TRIALS  BATCHES
1     4       64
2     1       256
`,
		},
		"a grid plan gives its size": {
			cfg:   expconf.SearcherConfig{Name: expconf.SearcherGrid, Metric: "acc", MaxConcurrentTrials: 0},
			space: gridSpace(),
			want: `Searcher: grid
Metric: acc (larger is better)
Trials: 24, no limit on concurrent trials
`,
		},
		"a single plan is one trial": {
			cfg:   expconf.SearcherConfig{Name: expconf.SearcherSingle, SmallerIsBetter: true, MaxConcurrentTrials: 16},
			space: testSpace(),
			want: `Searcher: single
Trials: 1, at most 16 at a time
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			plan, err := Preview(tc.cfg, tc.space)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, plan.String()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreviewRejectsBadConfig(t *testing.T) {
	_, err := Preview(expconf.SearcherConfig{Name: expconf.SearcherRandom}, testSpace())
	if err == nil {
		t.Error("Preview of a random search without max_trials succeeded")
	}
}
