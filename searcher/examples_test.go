package searcher_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// The files under testdata/determined-examples are experiment configs from
// Determined's examples/ folder, copied unchanged (see the README there).
// Users submit such configs as they are, so each must parse on top of the
// master's layer and preview a plausible search.
const examplesDir = "testdata/determined-examples"

// exampleTrials is the number of trials each example's search creates:
// 1 for single, max_trials for random and adaptive_asha, the grid size for
// grid.
var exampleTrials = map[string]int{
	"alpha-zero-tic-tac-toe__2_hpsearch.yaml":                100,
	"byol_pytorch__distributed-imagenet.yaml":                1,
	"cifar10_cpu_offloading__zero_3_cpu_offload.yaml":        1,
	"cifar10_pytorch__adaptive.yaml":                         16,
	"cifar10_pytorch__const.yaml":                            1,
	"core_api__0_start.yaml":                                 1,
	"core_api__3_hpsearch.yaml":                              10,
	"core_api__4_distributed.yaml":                           1,
	"core_api__5_profiling.yaml":                             1,
	"core_api_pytorch_mnist__adaptive.yaml":                  50,
	"core_api_pytorch_mnist__checkpoints.yaml":               1,
	"core_api_pytorch_mnist__const.yaml":                     1,
	"core_api_pytorch_mnist__distributed.yaml":               500,
	"core_api_pytorch_mnist__metrics.yaml":                   1,
	"custom_reducers_mnist_pytorch__const.yaml":              1,
	"darts_cifar10_pytorch__adaptive.yaml":                   1000,
	"darts_cifar10_pytorch__constrained_random.yaml":         100,
	"dcgan__mnist.yaml":                                      1,
	"gpt_neox__hp_search.yaml":                               27, // 3 categorical HPs of 3 values
	"hf_image_classification__adaptive.yaml":                 64,
	"imagenet_pytorch__distributed.yaml":                     1,
	"iris_tf_keras__adaptive.yaml":                           512,
	"iris_tf_keras__iris_tf_keras_high_priority.yaml":        1,
	"mnist_pytorch__adaptive.yaml":                           16,
	"mnist_pytorch__const.yaml":                              1,
	"mnist_pytorch__const_profiling.yaml":                    1,
	"mnist_pytorch__dist_random.yaml":                        2,
	"mnist_pytorch__distributed.yaml":                        1,
	"textual_inversion_stable_diffusion__generate_grid.yaml": 8, // 2 prompts x 4 guidance scales
	"vision_transformer_offloading__grid_search.yaml":        4, // 2 x 2 log HPs
}

// knownGap is a real Determined example that Resolute rejects today. err is
// the exact error text; the test fails when it changes, so a fix (or a new
// message) forces this table to be updated.
type knownGap struct {
	err    string
	reason string
}

var knownGaps = map[string]knownGap{
	"core_api_pytorch_mnist__distributed.yaml": {
		err: "searcher.max_time: required when searcher.name is adaptive_asha (line 32)\n" +
			"searcher.time_metric: required when searcher.name is adaptive_asha (line 32)",
		reason: "adaptive_asha with neither max_time/time_metric nor max_length, as shipped in this tutorial; Determined 0.38's AdaptiveASHAConfig has all three as optional pointers, whether its schema rejects this is unverified",
	},
}

// nameLayer stands for the name control.Configs gives a config without one,
// as Determined does.
var nameLayer = []byte("name: Experiment (calmly-brave-otter)\n")

func masterLayer(t *testing.T) []byte {
	t.Helper()
	layer, err := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": "/tmp/ckpt"}, nil)
	if err != nil {
		t.Fatalf("MasterDefaults: %v", err)
	}
	return layer
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkPlan previews the search and checks it creates want trials.
func checkPlan(t *testing.T, cfg *expconf.ExperimentConfig, want int) {
	t.Helper()
	plan, err := searcher.Preview(cfg.Searcher, cfg.Hyperparameters)
	if err != nil {
		t.Fatalf("Preview: %v", err)
	}
	if plan.Searcher != cfg.Searcher.Name {
		t.Errorf("plan.Searcher = %q, want %q", plan.Searcher, cfg.Searcher.Name)
	}
	if plan.Trials != want || plan.Trials < 1 {
		t.Errorf("plan.Trials = %d, want %d", plan.Trials, want)
	}
	switch cfg.Searcher.Name {
	case expconf.SearcherSingle:
		if plan.Trials != 1 {
			t.Errorf("single searcher plans %d trials", plan.Trials)
		}
	case expconf.SearcherRandom, expconf.SearcherAdaptiveASHA, expconf.SearcherAsyncHalving:
		if plan.Trials != cfg.Searcher.MaxTrials {
			t.Errorf("plan.Trials = %d, want max_trials %d", plan.Trials, cfg.Searcher.MaxTrials)
		}
	}
	if cfg.Searcher.Name == expconf.SearcherAdaptiveASHA {
		if len(plan.Brackets) == 0 || plan.MaxTime < 1 || plan.TimeMetric == "" {
			t.Errorf("ASHA plan without brackets or budget: %+v", plan)
		}
		n := 0
		for _, b := range plan.Brackets {
			n += b.Trials
		}
		if n != plan.Trials {
			t.Errorf("brackets hold %d trials, plan says %d", n, plan.Trials)
		}
	}
}

func TestDeterminedExamples(t *testing.T) {
	layer := masterLayer(t)
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("found %d example configs in %s, want at least 15", len(files), examplesDir)
	}
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data := readExample(t, name)
			if !strings.HasPrefix(string(data), "# From determined-ai/determined examples/") {
				t.Errorf("missing the provenance comment line")
			}
			want, ok := exampleTrials[name]
			if !ok {
				t.Fatalf("no expected trial count in exampleTrials")
			}
			cfg, err := expconf.ParseExperimentLayers([][]byte{nameLayer, layer, data}, nil)
			if gap, isGap := knownGaps[name]; isGap {
				if err == nil {
					t.Fatalf("known gap now parses; remove it from knownGaps (was: %s)", gap.reason)
				}
				if err.Error() != gap.err {
					t.Fatalf("known gap error changed; update knownGaps.\ngot:\n%v\nwant:\n%s", err, gap.err)
				}
				return
			} else if err != nil {
				t.Fatalf("ParseExperimentLayers:\n%v", err)
			}
			checkPlan(t, cfg, want)
		})
	}
	for name := range exampleTrials {
		if !seen[name] {
			t.Errorf("exampleTrials names %s, which is not in %s", name, examplesDir)
		}
	}
	for name := range knownGaps {
		if !seen[name] {
			t.Errorf("knownGaps names %s, which is not in %s", name, examplesDir)
		}
	}
}

// TestDeterminedExampleVariantsAccepted: valid edits of the examples that
// Determined accepts. Entries with gap set are rejected today; the test pins
// the exact error so a fix shows up.
func TestDeterminedExampleVariantsAccepted(t *testing.T) {
	layer := masterLayer(t)
	cases := []struct {
		name, file     string
		edit           func(string) string
		trials         int
		gap, gapReason string
	}{
		{
			name: "own s3 checkpoint storage over the master's shared_fs",
			file: "core_api_pytorch_mnist__const.yaml",
			edit: func(s string) string {
				return s + "checkpoint_storage:\n  type: s3\n  bucket: my-bucket\n"
			},
			// A storage of another type replaces the master's whole, as
			// Determined's union merge does.
			trials: 1,
		},
		{
			name: "workspace and project together",
			file: "core_api_pytorch_mnist__const.yaml",
			edit: func(s string) string {
				return s + "workspace: Deepspeed\nproject: VisionTransformer\n"
			},
			trials: 1,
		},
		{
			name: "explicit seed, labels and log policy",
			file: "mnist_pytorch__dist_random.yaml",
			edit: func(s string) string {
				return s + "reproducibility:\n  experiment_seed: 42\nlabels: [mnist, random]\n" +
					"log_policies:\n  - pattern: \".*CUDA out of memory.*\"\n    action:\n      type: cancel_retries\n"
			},
			trials: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.edit(string(readExample(t, c.file)))
			cfg, err := expconf.ParseExperimentLayers([][]byte{nameLayer, layer, []byte(data)}, nil)
			if c.gap != "" {
				if err == nil {
					t.Fatalf("known gap now parses; remove gap (was: %s)", c.gapReason)
				}
				if err.Error() != c.gap {
					t.Fatalf("known gap error changed.\ngot:\n%v\nwant:\n%s", err, c.gap)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseExperimentLayers:\n%v", err)
			}
			checkPlan(t, cfg, c.trials)
		})
	}
}

// TestDeterminedExampleBrokenVariants: broken edits of the examples must be
// rejected with an error that names the field path.
func TestDeterminedExampleBrokenVariants(t *testing.T) {
	layer := masterLayer(t)
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				panic("example does not contain " + old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	appendYAML := func(extra string) func(string) string {
		return func(s string) string { return s + extra }
	}
	cases := []struct {
		name, file string
		edit       func(string) string
		want       string // a line of the error: path, message and YAML line
	}{
		{
			name: "misspelled key",
			file: "core_api_pytorch_mnist__adaptive.yaml",
			edit: replace("  smaller_is_better: true", "  smaler_is_better: true"),
			want: "searcher.smaler_is_better: unknown key (did you mean smaller_is_better?) (line 31)",
		},
		{
			name: "misspelled top-level key",
			file: "core_api__3_hpsearch.yaml",
			edit: replace("max_restarts: 0", "max_restart: 0"),
			want: "max_restart: unknown key (did you mean max_restarts?) (line 20)",
		},
		{
			name: "wrong type",
			file: "dcgan__mnist.yaml",
			edit: replace("  slots_per_trial: 2", "  slots_per_trial: two"),
			want: `resources.slots_per_trial: expected an integer, got "two" (line 22)`,
		},
		{
			name: "adaptive_asha without max_trials",
			file: "core_api__3_hpsearch.yaml",
			edit: replace("   max_trials: 10\n", ""),
			want: "searcher.max_trials: required when searcher.name is adaptive_asha (line 14)",
		},
		{
			name: "minval >= maxval",
			file: "core_api__3_hpsearch.yaml",
			edit: replace("    minval: 1\n    maxval: 8", "    minval: 8\n    maxval: 1"),
			want: "hyperparameters.increment_by.minval: must be less than maxval (got 8 >= 1) (line 9)",
		},
		{
			name: "grid hyperparameter without count",
			file: "gpt_neox__hp_search.yaml",
			edit: replace("    log_interval: 10\n", "    log_interval:\n      type: int\n      minval: 1\n      maxval: 10\n"),
			want: "hyperparameters.overwrite_values.log_interval.count: required by the grid searcher for int hyperparameters (line 13)",
		},
		{
			name: "bad checkpoint_policy",
			file: "cifar10_cpu_offloading__zero_3_cpu_offload.yaml",
			edit: replace("checkpoint_policy: none", "checkpoint_policy: never"),
			want: `checkpoint_policy: must be one of best, all or none, got "never" (line 39)`,
		},
		{
			name: "priority 150",
			file: "iris_tf_keras__iris_tf_keras_high_priority.yaml",
			edit: replace("  resource_pool: defq_GPU_hipri\n", "  resource_pool: defq_GPU_hipri\n  priority: 150\n"),
			want: "resources.priority: must be between 1 and 99, got 150 (line 13)",
		},
		{
			name: "unknown searcher name",
			file: "mnist_pytorch__dist_random.yaml",
			edit: replace("  name: random", "  name: bayesian"),
			want: `searcher.name: must be one of single, random, grid, adaptive_asha or async_halving, got "bayesian" (line 30)`,
		},
		{
			name: "negative slots_per_trial",
			file: "imagenet_pytorch__distributed.yaml",
			edit: replace("  slots_per_trial: 4", "  slots_per_trial: -4"),
			want: "resources.slots_per_trial: must be 0 or more, got -4 (line 16)",
		},
		{
			name: "s3 checkpoint storage without bucket",
			file: "core_api_pytorch_mnist__const.yaml",
			edit: appendYAML("checkpoint_storage:\n  type: s3\n"),
			want: "checkpoint_storage.bucket: required when checkpoint_storage.type is s3 (line 10)",
		},
		{
			name: "environment variable not NAME=VALUE",
			file: "dcgan__mnist.yaml",
			edit: replace("    - NCCL_DEBUG=INFO", "    - NCCL_DEBUG"),
			want: `environment.environment_variables[0]: expected NAME=VALUE, got "NCCL_DEBUG" (line 15)`,
		},
		{
			name: "removed custom searcher",
			file: "core_api_pytorch_mnist__metrics.yaml",
			edit: replace("   name: single", "   name: custom"),
			want: "searcher.name: the custom searcher was removed in Determined 0.38 and is not supported; use one of single, random, grid, adaptive_asha or async_halving (line 7)",
		},
		{
			name: "max_trials 0",
			file: "darts_cifar10_pytorch__constrained_random.yaml",
			edit: replace("  max_trials: 100", "  max_trials: 0"),
			want: "searcher.max_trials: must be at least 1, got 0 (line 141)",
		},
		{
			name: "relative bind mount host_path",
			file: "darts_cifar10_pytorch__adaptive.yaml",
			edit: replace("  - host_path: /tmp", "  - host_path: tmp"),
			want: `bind_mounts[0].host_path: must be an absolute path, got "tmp" (line 129)`,
		},
		{
			name: "ASHA divisor 1",
			file: "hf_image_classification__adaptive.yaml",
			edit: replace("  divisor: 4", "  divisor: 1"),
			want: "searcher.divisor: must be greater than 1, got 1 (line 17)",
		},
		{
			name: "ASHA unknown mode",
			file: "darts_cifar10_pytorch__adaptive.yaml",
			edit: replace("  mode: aggressive", "  mode: fast"),
			want: `searcher.mode: must be one of standard, aggressive or conservative, got "fast" (line 147)`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.edit(string(readExample(t, c.file)))
			cfg, err := expconf.ParseExperimentLayers([][]byte{layer, []byte(data)}, nil)
			if err == nil {
				_, err = searcher.Preview(cfg.Searcher, cfg.Hyperparameters)
			}
			if err == nil {
				t.Fatalf("accepted; want an error with %q", c.want)
			}
			lines := strings.Split(err.Error(), "\n")
			found := false
			for _, l := range lines {
				found = found || l == c.want
			}
			if !found {
				t.Fatalf("error does not have the line\n  %s\ngot:\n%v", c.want, err)
			}
			// The line starts with the field path: a dotted key path with
			// list indexes, no spaces.
			if path, _, ok := strings.Cut(c.want, ": "); !ok || path == "" || strings.ContainsAny(path, " \"") {
				t.Fatalf("test bug: %q does not start with a field path", c.want)
			}
		})
	}
}
