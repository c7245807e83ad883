package expconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

var fixedSeed = expconf.WithDefaultSeed(func() uint32 { return 1700000000 })

func parse(t *testing.T, y string) *expconf.ExperimentConfig {
	t.Helper()
	c, err := expconf.ParseExperiment([]byte(y), fixedSeed)
	if err != nil {
		t.Fatalf("ParseExperiment: %v", err)
	}
	return c
}

func intp(i int) *int { return &i }

func TestParseExperimentAppliesDefaults(t *testing.T) {
	got := parse(t, "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n")
	want := &expconf.ExperimentConfig{
		Name:             "x",
		Labels:           []string{},
		Entrypoint:       expconf.Entrypoint{Shell: "python3 train.py"},
		Hyperparameters:  expconf.Hyperparameters{},
		Searcher:         expconf.SearcherConfig{Name: "single", Metric: "loss", SmallerIsBetter: true},
		Resources:        expconf.ResourcesConfig{SlotsPerTrial: 1, Weight: 1},
		MaxRestarts:      5,
		CheckpointPolicy: "best",
		Environment: expconf.EnvironmentConfig{
			Image:                expconf.DeviceImages{CPU: expconf.DefaultImage, CUDA: expconf.DefaultImage, ROCm: expconf.DefaultImage},
			EnvironmentVariables: expconf.DeviceEnv{CPU: []string{}, CUDA: []string{}, ROCm: []string{}},
			AddCapabilities:      []string{},
			DropCapabilities:     []string{},
		},
		BindMounts:      []expconf.BindMount{},
		Profiling:       expconf.ProfilingConfig{SyncTimings: true},
		Reproducibility: expconf.ReproducibilityConfig{ExperimentSeed: 1700000000},
		LogPolicies:     expconf.DefaultLogPolicies(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
}

func TestParseExperimentSearcherDefaults(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want expconf.SearcherConfig
	}{
		"random gets 16 concurrent trials": {
			yaml: "searcher: {name: random, metric: m, max_trials: 3}",
			want: expconf.SearcherConfig{Name: "random", Metric: "m", SmallerIsBetter: true, MaxTrials: 3, MaxConcurrentTrials: 16},
		},
		"grid gets 16 concurrent trials": {
			yaml: "searcher: {name: grid, metric: m, smaller_is_better: false}",
			want: expconf.SearcherConfig{Name: "grid", Metric: "m", MaxConcurrentTrials: 16},
		},
		"adaptive_asha gets standard mode, divisor 4 and 5 rungs": {
			yaml: "searcher: {name: adaptive_asha, metric: m, max_trials: 8, max_time: 100, time_metric: batches}",
			want: expconf.SearcherConfig{Name: "adaptive_asha", Metric: "m", SmallerIsBetter: true, MaxTrials: 8,
				MaxConcurrentTrials: 16, MaxTime: 100, TimeMetric: "batches", Mode: "standard", Divisor: 4, MaxRungs: 5},
		},
		"adaptive_asha keeps bracket rungs and mode": {
			yaml: "searcher: {name: adaptive_asha, metric: m, max_trials: 8, max_time: 100, time_metric: epochs, mode: conservative, divisor: 3, max_rungs: 2, bracket_rungs: [2, 1], max_concurrent_trials: 0}",
			want: expconf.SearcherConfig{Name: "adaptive_asha", Metric: "m", SmallerIsBetter: true, MaxTrials: 8,
				MaxTime: 100, TimeMetric: "epochs", Mode: "conservative", Divisor: 3, MaxRungs: 2, BracketRungs: []int{2, 1}},
		},
		"async_halving reads num_rungs": {
			yaml: "searcher: {name: async_halving, metric: m, max_trials: 8, num_rungs: 3, max_time: 10, time_metric: batches}",
			want: expconf.SearcherConfig{Name: "async_halving", Metric: "m", SmallerIsBetter: true, MaxTrials: 8,
				MaxConcurrentTrials: 16, MaxTime: 10, TimeMetric: "batches", Divisor: 4, NumRungs: 3},
		},
		"max_length alone fills max_time and time_metric": {
			yaml: "searcher: {name: adaptive_asha, metric: m, max_trials: 8, max_length: {batches: 500}}",
			want: expconf.SearcherConfig{Name: "adaptive_asha", Metric: "m", SmallerIsBetter: true, MaxTrials: 8,
				MaxConcurrentTrials: 16, MaxTime: 500, TimeMetric: "batches", Mode: "standard", Divisor: 4, MaxRungs: 5,
				MaxLength: &expconf.Length{Unit: "batches", Units: 500}},
		},
		"warm start keys are kept": {
			yaml: "searcher: {name: single, metric: m, source_trial_id: 7, source_checkpoint_uuid: abc}",
			want: expconf.SearcherConfig{Name: "single", Metric: "m", SmallerIsBetter: true, SourceTrialID: intp(7), SourceCheckpointUUID: ptr("abc")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := parse(t, tc.yaml)
			if diff := cmp.Diff(tc.want, got.Searcher); diff != "" {
				t.Errorf("searcher mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseExperimentTestdataRoundTrips(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "notebook.yaml" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c := parse(t, string(data))
			y, err := c.YAML()
			if err != nil {
				t.Fatal(err)
			}
			j, err := c.JSON()
			if err != nil {
				t.Fatal(err)
			}
			for form, out := range map[string][]byte{"yaml": y, "json": j} {
				again, err := expconf.ParseExperiment(out, fixedSeed)
				if err != nil {
					t.Fatalf("%s re-parse: %v\n%s", form, err, out)
				}
				// Ignored deprecated keys are dropped, so their warnings go.
				if diff := cmp.Diff(c, again, cmpopts.IgnoreFields(expconf.ExperimentConfig{}, "Warnings")); diff != "" {
					t.Errorf("%s round trip changed the config (-first +again):\n%s", form, diff)
				}
			}
		})
	}
}

func TestParseExperimentLegacyConfigWarns(t *testing.T) {
	data, err := os.ReadFile("testdata/legacy_max_length.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, string(data))
	want := []string{
		"searcher.max_length: deprecated since Determined 0.38; the training length belongs in the training code (for adaptive_asha set max_time and time_metric)",
		"searcher.stop_once: deprecated; ASHA always stops trials early now",
		"min_validation_period: deprecated since Determined 0.38; validate from the training code",
		"min_checkpoint_period: deprecated since Determined 0.38; checkpoint from the training code",
		"records_per_epoch: deprecated since Determined 0.38 and ignored: the PyTorch trainer counts an epoch from its data loader",
		"scheduling_unit: deprecated since Determined 0.38",
		"optimizations: deprecated since Determined 0.38; kept for the legacy trial APIs",
		"optimizations.mixed_precision: ignored: Resolute's PyTorch trainer reads only optimizations.aggregation_frequency",
	}
	if diff := cmp.Diff(want, c.Warnings); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
	if c.Searcher.MaxTime != 9375 || c.Searcher.TimeMetric != "batches" {
		t.Errorf("max_length not carried to max_time/time_metric: %+v", c.Searcher)
	}
	if diff := cmp.Diff(&expconf.Length{Unit: "epochs", Units: 1}, c.MinValidationPeriod); diff != "" {
		t.Errorf("min_validation_period (-want +got):\n%s", diff)
	}
	wantPolicies := []expconf.LogPolicy{
		{Name: "CUDA OOM", Pattern: ".*CUDA out of memory.*", Action: "cancel_retries"},
		{Name: "ECC Error", Pattern: ".*uncorrectable ECC error encountered.*", Action: "exclude_node"},
		{Pattern: ".*CUDA out of memory.*", Action: "cancel_retries"},
	}
	if diff := cmp.Diff(wantPolicies, c.LogPolicies); diff != "" {
		t.Errorf("log policies (-want +got):\n%s", diff)
	}
}

func TestErrorsConvertToResoluteError(t *testing.T) {
	_, err := expconf.ParseExperiment([]byte("max_restarts: -1"))
	var list expconf.Errors
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("errors.As Errors: %v", err)
	}
	var rerr *resolute.Error
	if !errors.As(err, &rerr) || rerr.Code != resolute.EInvalid {
		t.Fatalf("errors.As *resolute.Error: %v", err)
	}
	if rerr.Message != "max_restarts: must be 0 or more, got -1 (line 1)" {
		t.Errorf("message = %q", rerr.Message)
	}
}

func TestComplete(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want string
	}{
		"an empty layer lacks every eventually-required key": {
			yaml: "",
			want: "name: required\nentrypoint: required\nsearcher: required\ncheckpoint_storage: required (set it in the config or in the master's default)",
		},
		"a searcher without a metric is incomplete": {
			yaml: "name: x\nentrypoint: a\nsearcher: {name: single}\ncheckpoint_storage: {type: directory, container_path: /c}",
			want: "searcher.metric: required",
		},
		"a full config is complete": {
			yaml: "name: x\nentrypoint: a\nsearcher: {name: single, metric: m}\ncheckpoint_storage: {type: directory, container_path: /c}",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := parse(t, tc.yaml).Complete()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Complete() = %q, want %q", got, tc.want)
			}
		})
	}
	if got := expconf.GenerateName(0x123); got != "Experiment (deftly-bright-crane)" {
		t.Errorf("GenerateName(0x123) = %q", got)
	}
}
