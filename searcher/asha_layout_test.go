package searcher

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestASHABracketLayout(t *testing.T) {
	// max_trials 16, max_time 256, divisor 4, max_rungs 3:
	//   maxRungs = min(3, ⌊log 256/log 4⌋+1 = 5, ⌊log 16/log 4⌋+1 = 3) = 3.
	//   rung targets for n rungs: 256/4^(n-k-1) → 3 rungs: 16, 64, 256;
	//   2 rungs: 64, 256; 1 rung: 256.
	//   weight of an n-rung bracket: 4^(n-1)/n → 3: 16/3, 2: 2, 1: 1.
	// standard: rungs [(3-1)/2+1 .. 3] = [3 2]; total weight 22/3;
	//   trials ⌊(16/3)/(22/3)·16⌋ = ⌊11.6⌋ = 11 and ⌊2/(22/3)·16⌋ = ⌊4.4⌋ = 4,
	//   remainder 1 to the first: [12 4]; concurrency 16/2 = [8 8].
	//   nominal trials per rung: 12 → ⌊12/4⌋ = 3 → max(⌊3/4⌋,1) = 1; 4 → 1.
	// aggressive: [3], all 16 trials, 16 at a time: 16 → 4 → 1.
	// conservative: [3 2 1]; total weight 25/3; trials ⌊10.24⌋ = 10,
	//   ⌊3.84⌋ = 3, ⌊1.92⌋ = 1, remainder 2 to the first: [12 3 1];
	//   concurrency 16/3 = 5 rem 1: [6 5 5].
	b3 := func(trials, conc int, r ...int) BracketPlan {
		return BracketPlan{NumRungs: 3, Trials: trials, MaxConcurrentTrials: conc, Rungs: []RungPlan{
			{Target: 16, Trials: r[0]}, {Target: 64, Trials: r[1]}, {Target: 256, Trials: r[2]}}}
	}
	b2 := func(trials, conc int, r ...int) BracketPlan {
		return BracketPlan{NumRungs: 2, Trials: trials, MaxConcurrentTrials: conc, Rungs: []RungPlan{
			{Target: 64, Trials: r[0]}, {Target: 256, Trials: r[1]}}}
	}
	b1 := func(trials, conc int) BracketPlan {
		return BracketPlan{NumRungs: 1, Trials: trials, MaxConcurrentTrials: conc, Rungs: []RungPlan{
			{Target: 256, Trials: trials}}}
	}
	tests := map[string]struct {
		edit        func(*expconf.SearcherConfig)
		want        []BracketPlan
		wantInitial int
	}{
		"standard mode runs the upper half of the rung counts": {
			edit: func(c *expconf.SearcherConfig) {},
			want: []BracketPlan{b3(12, 8, 12, 3, 1), b2(4, 8, 4, 1)}, wantInitial: 8 + 4,
		},
		"an empty mode means standard": {
			edit: func(c *expconf.SearcherConfig) { c.Mode = "" },
			want: []BracketPlan{b3(12, 8, 12, 3, 1), b2(4, 8, 4, 1)}, wantInitial: 12,
		},
		"aggressive mode runs one bracket of max rungs": {
			edit: func(c *expconf.SearcherConfig) { c.Mode = expconf.ModeAggressive },
			want: []BracketPlan{b3(16, 16, 16, 4, 1)}, wantInitial: 16,
		},
		"conservative mode runs every rung count": {
			edit: func(c *expconf.SearcherConfig) { c.Mode = expconf.ModeConservative },
			want: []BracketPlan{b3(12, 6, 12, 3, 1), b2(3, 5, 3, 1), b1(1, 5)}, wantInitial: 6 + 3 + 1,
		},
		"bracket_rungs overrides the mode": {
			// [2 1]: weights 2 and 1 → ⌊10.7⌋ = 10, ⌊5.3⌋ = 5, remainder 1 → [11 5].
			edit: func(c *expconf.SearcherConfig) { c.BracketRungs = []int{1, 2} },
			want: []BracketPlan{b2(11, 8, 11, 2), b1(5, 8)}, wantInitial: 8 + 5,
		},
		"no concurrency limit runs max(last bracket's trials, divisor) per bracket": {
			edit: func(c *expconf.SearcherConfig) { c.MaxConcurrentTrials = 0 },
			want: []BracketPlan{b3(12, 4, 12, 3, 1), b2(4, 4, 4, 1)}, wantInitial: 4 + 4,
		},
		"a concurrency below the bracket count still runs one per bracket": {
			edit: func(c *expconf.SearcherConfig) { c.MaxConcurrentTrials = 1 },
			want: []BracketPlan{b3(12, 1, 12, 3, 1), b2(4, 1, 4, 1)}, wantInitial: 2,
		},
		"odd concurrency goes to the brackets with most rungs first": {
			edit: func(c *expconf.SearcherConfig) { c.MaxConcurrentTrials = 5 },
			want: []BracketPlan{b3(12, 3, 12, 3, 1), b2(4, 2, 4, 1)}, wantInitial: 5,
		},
		"max_trials limits the rungs": {
			// ⌊log 4/log 4⌋+1 = 2 rungs; standard [(2-1)/2+1 .. 2] = [1 2] → [2 1];
			// weights 2 and 1: ⌊2.67⌋ = 2, ⌊1.33⌋ = 1, remainder 1 → [3 1].
			edit: func(c *expconf.SearcherConfig) { c.MaxTrials = 4 },
			want: []BracketPlan{b2(3, 8, 3, 1), b1(1, 8)}, wantInitial: 3 + 1,
		},
		"async_halving is one bracket of num_rungs": {
			edit: func(c *expconf.SearcherConfig) {
				c.Name, c.NumRungs, c.MaxConcurrentTrials = expconf.SearcherAsyncHalving, 3, 0
			},
			// No limit: min(divisor^(3-1), max_trials) = 16 start.
			want: []BracketPlan{b3(16, 16, 16, 4, 1)}, wantInitial: 16,
		},
		"the deprecated max_length stands in for max_time": {
			edit: func(c *expconf.SearcherConfig) {
				c.MaxTime, c.TimeMetric = 0, ""
				c.MaxLength = &expconf.Length{Unit: "batches", Units: 256}
			},
			want: []BracketPlan{b3(12, 8, 12, 3, 1), b2(4, 8, 4, 1)}, wantInitial: 12,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := ashaCfg(expconf.ModeStandard)
			tc.edit(&cfg)
			plan, err := Preview(cfg, testSpace())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, plan.Brackets); diff != "" {
				t.Errorf("brackets (-want +got):\n%s", diff)
			}
			if got := count[Create](mustNew(t, cfg, testSpace(), 1).Initial()); got != tc.wantInitial {
				t.Errorf("Initial created %d trials, want %d", got, tc.wantInitial)
			}
		})
	}
}

func TestASHALayoutLargerSearch(t *testing.T) {
	// max_trials 100, max_time 1000, divisor 3, max_rungs 5, standard:
	//   maxRungs = min(5, ⌊6.29⌋+1 = 7, ⌊4.19⌋+1 = 5) = 5 → brackets [5 4 3];
	//   weights 3^4/5 = 16.2, 3^3/4 = 6.75, 3^2/3 = 3, total 25.95;
	//   trials ⌊62.4⌋ = 62, ⌊26.0⌋ = 26, ⌊11.6⌋ = 11, remainder 1 → [63 26 11];
	//   concurrency 16/3 = 5 rem 1 → [6 5 5];
	//   targets ⌊1000/3^k⌋: 12, 37, 111, 333, 1000.
	cfg := expconf.SearcherConfig{
		Name: expconf.SearcherAdaptiveASHA, Metric: "loss", SmallerIsBetter: true,
		MaxTrials: 100, MaxConcurrentTrials: 16, MaxTime: 1000, TimeMetric: "batches",
		Mode: expconf.ModeStandard, Divisor: 3, MaxRungs: 5,
	}
	plan, err := Preview(cfg, testSpace())
	if err != nil {
		t.Fatal(err)
	}
	want := []BracketPlan{
		{NumRungs: 5, Trials: 63, MaxConcurrentTrials: 6, Rungs: []RungPlan{
			{12, 63}, {37, 21}, {111, 7}, {333, 2}, {1000, 1}}},
		{NumRungs: 4, Trials: 26, MaxConcurrentTrials: 5, Rungs: []RungPlan{
			{37, 26}, {111, 8}, {333, 2}, {1000, 1}}},
		{NumRungs: 3, Trials: 11, MaxConcurrentTrials: 5, Rungs: []RungPlan{
			{111, 11}, {333, 3}, {1000, 1}}},
	}
	if diff := cmp.Diff(want, plan.Brackets); diff != "" {
		t.Errorf("brackets (-want +got):\n%s", diff)
	}
	if plan.Trials != 100 || plan.MaxConcurrentTrials != 16 {
		t.Errorf("plan has %d trials, %d concurrent; want 100, 16", plan.Trials, plan.MaxConcurrentTrials)
	}
}

func TestASHAConfigErrors(t *testing.T) {
	tests := map[string]func(*expconf.SearcherConfig){
		"a missing metric is rejected":         func(c *expconf.SearcherConfig) { c.Metric = "" },
		"a missing time_metric is rejected":    func(c *expconf.SearcherConfig) { c.TimeMetric = "" },
		"a zero max_time is rejected":          func(c *expconf.SearcherConfig) { c.MaxTime = 0 },
		"a divisor of 1 is rejected":           func(c *expconf.SearcherConfig) { c.Divisor = 1 },
		"a zero max_trials is rejected":        func(c *expconf.SearcherConfig) { c.MaxTrials = 0 },
		"an unknown mode is rejected":          func(c *expconf.SearcherConfig) { c.Mode = "reckless" },
		"a zero bracket rung is rejected":      func(c *expconf.SearcherConfig) { c.BracketRungs = []int{0} },
		"async_halving needs num_rungs":        func(c *expconf.SearcherConfig) { c.Name = expconf.SearcherAsyncHalving },
		"a negative concurrency is rejected":   func(c *expconf.SearcherConfig) { c.MaxConcurrentTrials = -1 },
		"the custom searcher is not supported": func(c *expconf.SearcherConfig) { c.Name = "custom" },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := ashaCfg(expconf.ModeStandard)
			edit(&cfg)
			if _, err := New(cfg, testSpace(), 1); err == nil {
				t.Fatal("New succeeded, want an error")
			}
		})
	}
}
