package searcher

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestGridValues(t *testing.T) {
	tests := map[string]struct {
		hp   expconf.Hyperparameter
		want []any
	}{
		"an int range gets evenly spaced rounded points": {
			// 0 + i·5/3 = 0, 1.67, 3.33, 5 → 0, 2, 3, 5
			hp:   expconf.Hyperparameter{Type: expconf.HPInt, MinVal: 0, MaxVal: 5, Count: intp(4)},
			want: []any{0, 2, 3, 5},
		},
		"an int count past the range is clamped to the integers in it": {
			hp:   expconf.Hyperparameter{Type: expconf.HPInt, MinVal: 1, MaxVal: 3, Count: intp(10)},
			want: []any{1, 2, 3},
		},
		"an int count of one is the midpoint rounded half away from zero": {
			hp:   expconf.Hyperparameter{Type: expconf.HPInt, MinVal: 1, MaxVal: 4, Count: intp(1)},
			want: []any{3},
		},
		"a double range includes both ends": {
			hp:   expconf.Hyperparameter{Type: expconf.HPDouble, MinVal: 0, MaxVal: 1, Count: intp(3)},
			want: []any{0.0, 0.5, 1.0},
		},
		"a log range is evenly spaced in the exponent": {
			hp:   expconf.Hyperparameter{Type: expconf.HPLog, MinVal: -3, MaxVal: 0, Base: 10, Count: intp(4)},
			want: []any{0.001, 0.01, 0.1, 1.0},
		},
		"a log range without a base uses 10": {
			hp:   expconf.Hyperparameter{Type: expconf.HPLog, MinVal: 1, MaxVal: 3, Count: intp(1)},
			want: []any{100.0},
		},
		"a log range in base 2": {
			hp:   expconf.Hyperparameter{Type: expconf.HPLog, MinVal: 0, MaxVal: 4, Base: 2, Count: intp(3)},
			want: []any{1.0, 4.0, 16.0},
		},
		"a categorical gives every value": {
			hp:   expconf.Hyperparameter{Type: expconf.HPCategorical, Vals: []any{"a", 2, true}},
			want: []any{"a", 2, true},
		},
		"a const gives its value": {
			hp:   expconf.Hyperparameter{Type: expconf.HPConst, Val: "x"},
			want: []any{"x"},
		},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(a)) })
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gridValues(tc.hp), approx); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGridSize(t *testing.T) {
	c := intp
	tests := map[string]struct {
		space expconf.Hyperparameters
		want  int
	}{
		"a mixed space multiplies its axes": {
			space: expconf.Hyperparameters{
				"a": {Type: expconf.HPInt, MinVal: 1, MaxVal: 10, Count: c(4)},
				"b": {Type: expconf.HPLog, MinVal: -5, MaxVal: -1, Count: c(5)},
				"c": {Type: expconf.HPCategorical, Vals: []any{1, 2, 3}},
				"d": {Type: expconf.HPConst, Val: 7},
				"e": {Type: expconf.HPDouble, MinVal: 0, MaxVal: 1, Count: c(2)},
			},
			want: 4 * 5 * 3 * 1 * 2,
		},
		"an int count is clamped before multiplying": {
			space: expconf.Hyperparameters{
				"a": {Type: expconf.HPInt, MinVal: 0, MaxVal: 2, Count: c(100)},
				"b": {Type: expconf.HPCategorical, Vals: []any{"x", "y"}},
			},
			want: 3 * 2,
		},
		"nested hyperparameters add their own axes": {
			space: expconf.Hyperparameters{
				"opt": {Type: expconf.HPNested, Nested: expconf.Hyperparameters{
					"lr":   {Type: expconf.HPLog, MinVal: -3, MaxVal: -1, Count: c(3)},
					"name": {Type: expconf.HPCategorical, Vals: []any{"adam", "sgd"}},
					"deep": {Type: expconf.HPNested, Nested: expconf.Hyperparameters{
						"beta": {Type: expconf.HPDouble, MinVal: 0.9, MaxVal: 0.99, Count: c(2)},
					}},
				}},
				"bs": {Type: expconf.HPConst, Val: 32},
			},
			want: 3 * 2 * 2,
		},
		"an empty space is one trial": {space: expconf.Hyperparameters{}, want: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := expconf.SearcherConfig{Name: expconf.SearcherGrid, Metric: "loss"}
			plan, err := Preview(cfg, tc.space)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Trials != tc.want {
				t.Errorf("grid size %d, want %d", plan.Trials, tc.want)
			}
			s := mustNew(t, cfg, tc.space, 1)
			if got := count[Create](s.Initial()); got != tc.want {
				t.Errorf("Initial created %d trials, want %d", got, tc.want)
			}
		})
	}
}

func TestGridPointsAreTheProductInDeterminedOrder(t *testing.T) {
	space := expconf.Hyperparameters{
		"a": {Type: expconf.HPCategorical, Vals: []any{"x", "y"}},
		"n": {Type: expconf.HPNested, Nested: expconf.Hyperparameters{
			"b": {Type: expconf.HPInt, MinVal: 1, MaxVal: 2, Count: intp(2)},
		}},
	}
	s := mustNew(t, expconf.SearcherConfig{Name: expconf.SearcherGrid}, space, 1)
	var got []map[string]any
	for _, a := range s.Initial() {
		got = append(got, a.(Create).Hparams)
	}
	// The product varies the last axis fastest; points go out last first.
	want := []map[string]any{
		{"a": "y", "n": map[string]any{"b": 2}},
		{"a": "y", "n": map[string]any{"b": 1}},
		{"a": "x", "n": map[string]any{"b": 2}},
		{"a": "x", "n": map[string]any{"b": 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

func TestSpaceErrors(t *testing.T) {
	tests := map[string]struct {
		name string
		hp   expconf.Hyperparameter
	}{
		"grid needs a count on int":          {expconf.SearcherGrid, expconf.Hyperparameter{Type: expconf.HPInt, MinVal: 1, MaxVal: 3}},
		"grid needs a count on log":          {expconf.SearcherGrid, expconf.Hyperparameter{Type: expconf.HPLog, MinVal: 1, MaxVal: 3}},
		"a zero count is rejected":           {expconf.SearcherGrid, expconf.Hyperparameter{Type: expconf.HPDouble, MaxVal: 1, Count: intp(0)}},
		"minval above maxval is rejected":    {expconf.SearcherRandom, expconf.Hyperparameter{Type: expconf.HPDouble, MinVal: 2, MaxVal: 1}},
		"a fractional int bound is rejected": {expconf.SearcherRandom, expconf.Hyperparameter{Type: expconf.HPInt, MinVal: 0.5, MaxVal: 3}},
		"an empty categorical is rejected":   {expconf.SearcherRandom, expconf.Hyperparameter{Type: expconf.HPCategorical}},
		"an unknown type is rejected":        {expconf.SearcherRandom, expconf.Hyperparameter{Type: "uniform"}},
		"a log base of 1 is rejected":        {expconf.SearcherRandom, expconf.Hyperparameter{Type: expconf.HPLog, Base: 1, MaxVal: 1}},
		"errors inside nested are found": {expconf.SearcherRandom, expconf.Hyperparameter{Type: expconf.HPNested,
			Nested: expconf.Hyperparameters{"x": {Type: expconf.HPCategorical}}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := expconf.SearcherConfig{Name: tc.name, MaxTrials: 1}
			if _, err := New(cfg, expconf.Hyperparameters{"h": tc.hp}, 1); err == nil {
				t.Error("New succeeded, want an error")
			}
		})
	}
}

// TestRandomSamplingRanges: random search samples hyperparameters of every
// type of testSpace: int and double between minval and maxval, log in
// base**minval..base**maxval, categorical among its vals.
func TestRandomSamplingRanges(t *testing.T) {
	s := mustNew(t, expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 3000}, testSpace(), 11)
	seenInt := map[int]bool{}
	seenWidth := map[int]bool{}
	seenOpt := map[any]bool{}
	for _, a := range s.Initial() {
		hp := a.(Create).Hparams
		layers := hp["layers"].(int)
		seenInt[layers] = true
		if layers < 1 || layers > 8 {
			t.Fatalf("int layers %d outside [1, 8]", layers)
		}
		if d := hp["drop"].(float64); d < 0 || d >= 0.5 {
			t.Fatalf("double drop %v outside [0, 0.5)", d)
		}
		if lr := hp["lr"].(float64); lr < 1e-5 || lr > 1e-1 {
			t.Fatalf("log lr %v outside [1e-5, 1e-1]", lr)
		}
		seenOpt[hp["opt"]] = true
		if hp["gbs"] != 32 {
			t.Fatalf("const gbs is %v, want 32", hp["gbs"])
		}
		width := hp["model"].(map[string]any)["width"].(int)
		if width < 16 || width > 64 {
			t.Fatalf("nested width %d outside [16, 64]", width)
		}
		seenWidth[width] = true
	}
	if len(seenInt) != 8 || len(seenWidth) != 49 {
		t.Errorf("int draws covered %d of 8 and %d of 49 values, want both ends included", len(seenInt), len(seenWidth))
	}
	if len(seenOpt) != 2 {
		t.Errorf("categorical draws covered %d of 2 values", len(seenOpt))
	}
	// Log draws are uniform in the exponent: about half fall below 1e-3.
	below := 0
	s = mustNew(t, expconf.SearcherConfig{Name: expconf.SearcherRandom, MaxTrials: 2000}, testSpace(), 12)
	for _, a := range s.Initial() {
		if a.(Create).Hparams["lr"].(float64) < 1e-3 {
			below++
		}
	}
	if below < 900 || below > 1100 {
		t.Errorf("%d of 2000 log draws fell below the middle exponent, want about 1000", below)
	}
}
