package control_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

func ck(uuid string, trial, steps int64, score float64, scored bool) control.ScoredCheckpoint {
	return control.ScoredCheckpoint{Checkpoint: resolute.Checkpoint{UUID: uuid, TrialID: trial, StepsCompleted: steps}, Score: score, Scored: scored}
}

func TestCheckpointGCKeepsWhatThePolicySays(t *testing.T) {
	cps := []control.ScoredCheckpoint{
		ck("a1", 1, 10, 0.9, true), ck("a2", 1, 20, 0.5, true), ck("a3", 1, 30, 0.7, true),
		ck("b1", 2, 10, 0.4, true), ck("b2", 2, 20, 0.6, true), ck("b3", 2, 30, 0, false),
	}
	tests := map[string]struct {
		policy control.GCPolicy
		keep   map[string]bool
		want   []string
	}{
		"the defaults keep each trial's best and latest": {
			policy: control.GCPolicy{TrialBest: 1, TrialLatest: 1, SmallerIsBetter: true},
			want:   []string{"a1", "b2"},
		},
		"experiment best keeps the best across trials": {
			policy: control.GCPolicy{ExperimentBest: 2, SmallerIsBetter: true},
			want:   []string{"a1", "a3", "b2", "b3"},
		},
		"larger is better flips the order": {
			policy: control.GCPolicy{TrialBest: 1, SmallerIsBetter: false},
			want:   []string{"a2", "a3", "b1", "b3"},
		},
		"a checkpoint needed to resume is never deleted": {
			policy: control.GCPolicy{},
			keep:   map[string]bool{"b3": true},
			want:   []string{"a1", "a2", "a3", "b1", "b2"},
		},
		"unscored checkpoints are kept only as latest": {
			policy: control.GCPolicy{TrialLatest: 1},
			want:   []string{"a1", "a2", "b1", "b2"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := control.CheckpointsToDelete(cps, tc.policy, tc.keep)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("deleted (-want +got):\n%s", diff)
			}
		})
	}
}
