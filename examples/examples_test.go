// Package examples holds runnable Determined example experiments. These tests
// need no Resolute server: they check the configs with expconf, run each
// train.py off-cluster (as `python3 train.py` on a laptop), and run it as a
// trial against the harness's fake master to check pausing, resuming and
// InvalidHP (testdata/on_cluster.py).
package examples

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/expconf"
)

// shortSteps is EXAMPLE_MAX_STEPS for each example: enough for two
// validations (and checkpoints), so a run takes a second or two.
var shortSteps = map[string]int{"core-api-stdlib": 50, "pytorch-digits": 80}

// stdlibPython is the interpreter for the standard-library example: Debian's,
// which tasks use, else any python3.
func stdlibPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 available")
	}
	return p
}

// torchPython is /usr/bin/python3 when it can import torch and sklearn
// (Debian's packages install there); otherwise the test skips.
func torchPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-B", "-c", "import torch, sklearn").Run(); err != nil {
		t.Skipf("%s cannot import torch and sklearn (%v); install them with "+
			"`apt-get install python3-torch python3-sklearn` (scripts/setup.sh test does)", py, err)
	}
	return py
}

// env is the test's environment without DET_* variables (so the script
// cannot mistake itself for a task), with the harness importable, no
// __pycache__ in the source tree, and HOME (where off-cluster checkpoints go)
// in a temporary directory.
func env(t *testing.T, home string, extra ...string) []string {
	t.Helper()
	harness, err := filepath.Abs("../harness")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DET_") || k == "PYTHONPATH" || k == "HOME" || k == "XDG_DATA_HOME" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "PYTHONPATH="+harness, "PYTHONDONTWRITEBYTECODE=1", "HOME="+home)
	return append(out, extra...)
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	t.Logf("%s %s: %.1fs", filepath.Base(name), strings.Join(args, " "), time.Since(start).Seconds())
	return string(out)
}

var validationRE = regexp.MustCompile(`report_validation_metrics\(steps_completed=(\d+), metrics=\{'validation_loss': ([0-9.e-]+)`)

// testOffCluster runs `python3 train.py` as a user would before submitting:
// it must exit 0, log a falling validation_loss, and leave checkpoint
// directories with metadata.json in the default local storage.
func testOffCluster(t *testing.T, example, py, modelFile string) {
	home := t.TempDir()
	steps := shortSteps[example]
	out := run(t, example, env(t, home, "EXAMPLE_MAX_STEPS="+strconv.Itoa(steps)), py, "train.py")

	vals := validationRE.FindAllStringSubmatch(out, -1)
	if len(vals) < 2 {
		t.Fatalf("want at least two validations, got %d:\n%s", len(vals), out)
	}
	first, _ := strconv.ParseFloat(vals[0][2], 64)
	last, _ := strconv.ParseFloat(vals[len(vals)-1][2], 64)
	if vals[len(vals)-1][1] != strconv.Itoa(steps) || !(last < first) {
		t.Errorf("validation_loss should fall to step %d: first %v, last %v at step %s",
			steps, first, last, vals[len(vals)-1][1])
	}

	metas, _ := filepath.Glob(filepath.Join(home, ".local/share/determined/*/metadata.json"))
	if len(metas) != len(vals) {
		t.Fatalf("want one checkpoint per validation (%d), found metadata.json in %d:\n%s",
			len(vals), len(metas), out)
	}
	for _, m := range metas {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			StepsCompleted int `json:"steps_completed"`
		}
		if err := json.Unmarshal(data, &md); err != nil || md.StepsCompleted <= 0 {
			t.Errorf("%s: %s (%v)", m, data, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(m), modelFile)); err != nil {
			t.Errorf("checkpoint lacks the model: %v", err)
		}
	}
}

// constHparams are the hyperparameters of the example's const.yaml, as JSON,
// with overrides applied: what the master would give the trial.
func constHparams(t *testing.T, example string, overrides map[string]any) string {
	t.Helper()
	cfg := parse(t, filepath.Join(example, "const.yaml"))
	hp := map[string]any{}
	for name, h := range cfg.Hyperparameters {
		hp[name] = h.Val
	}
	for k, v := range overrides {
		hp[k] = v
	}
	data, err := json.Marshal(hp)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// testOnCluster pauses, resumes and (given invalid) rejects a trial against
// the harness's fake master; see testdata/on_cluster.py.
func testOnCluster(t *testing.T, example, py string, invalid map[string]any) {
	args := []string{"-B", "testdata/on_cluster.py", example, strconv.Itoa(shortSteps[example]),
		constHparams(t, example, nil)}
	if invalid != nil {
		args = append(args, constHparams(t, example, invalid))
	}
	t.Log(strings.TrimSpace(run(t, ".", env(t, t.TempDir()), py, args...)))
}

func TestStdlib(t *testing.T) {
	py := stdlibPython(t)
	t.Run("OffCluster", func(t *testing.T) { testOffCluster(t, "core-api-stdlib", py, "model.json") })
	t.Run("OnCluster", func(t *testing.T) {
		// A batch larger than the training set is the documented InvalidHP case.
		testOnCluster(t, "core-api-stdlib", py, map[string]any{"batch_size": 256})
	})
}

func TestPyTorch(t *testing.T) {
	py := torchPython(t)
	t.Run("OffCluster", func(t *testing.T) { testOffCluster(t, "pytorch-digits", py, "model.pt") })
	t.Run("OnCluster", func(t *testing.T) { testOnCluster(t, "pytorch-digits", py, nil) })
	t.Run("LoadBest", func(t *testing.T) {
		home := t.TempDir()
		run(t, "pytorch-digits", env(t, home, "EXAMPLE_MAX_STEPS=40"), py, "train.py")
		ckpts, _ := filepath.Glob(filepath.Join(home, ".local/share/determined/*"))
		if len(ckpts) != 1 {
			t.Fatalf("want one checkpoint, got %v", ckpts)
		}
		out := run(t, "pytorch-digits", env(t, home), py, "load_best.py", ckpts[0])
		if !strings.Contains(out, "step 40") || !strings.Contains(out, "accuracy") {
			t.Errorf("load_best.py output:\n%s", out)
		}
	})
}

var trialEntrypointRE = regexp.MustCompile(`^python3 (-m determined\.launch\.torch_distributed python3 )?train\.py --batches (\d+)$`)

// TestPyTorchTrial runs the PyTorch Trial API example as a laptop would: no
// cluster, the Trainer's local mode (examples/pytorch-trial). The configs
// run on a real master in e2e's TestThePyTorchTrialExampleRunsOnAMaster.
func TestPyTorchTrial(t *testing.T) {
	py := torchPython(t)
	home := t.TempDir()
	out := run(t, "pytorch-trial", env(t, home), py, "train.py", "--batches", "80")
	vals := validationRE.FindAllStringSubmatch(out, -1)
	if len(vals) != 2 || vals[1][1] != "80" {
		t.Fatalf("want validations at 40 and 80:\n%s", out)
	}
	ckpts, _ := filepath.Glob(filepath.Join(home, ".local/share/determined/*/state_dict.pth"))
	if len(ckpts) == 0 {
		t.Fatalf("no checkpoint with a state_dict.pth:\n%s", out)
	}
}

func parse(t *testing.T, path string) *expconf.ExperimentConfig {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := expconf.ParseExperiment(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

// TestConfigs checks every config parses without warnings (no keys deprecated
// in Determined 0.38), leaves checkpoint storage to the master, and that the
// ASHA configs' max_time matches the training length train.py reads.
func TestConfigs(t *testing.T) {
	paths, _ := filepath.Glob("*/*.yaml")
	if len(paths) != 8 {
		t.Errorf("want 8 configs, found %v", paths)
	}
	for _, path := range paths {
		cfg := parse(t, path)
		s := cfg.Searcher
		if len(cfg.Warnings) > 0 {
			t.Errorf("%s: warnings %v", path, cfg.Warnings)
		}
		if cfg.CheckpointStorage != nil {
			t.Errorf("%s: sets checkpoint_storage; the master's default should apply", path)
		}
		// The Trial API example gives its length on the command line.
		batches := -1
		if m := trialEntrypointRE.FindStringSubmatch(cfg.Entrypoint.Shell); m != nil && strings.HasPrefix(path, "pytorch-trial") {
			batches, _ = strconv.Atoi(m[2])
			if (m[1] != "") != (cfg.Resources.SlotsPerTrial > 1) {
				t.Errorf("%s: entrypoint %q with %d slots", path, cfg.Entrypoint.Shell, cfg.Resources.SlotsPerTrial)
			}
		} else if cfg.Entrypoint.Shell != "python3 train.py" {
			t.Errorf("%s: entrypoint %v", path, cfg.Entrypoint)
		}
		if s.Metric != "validation_loss" || !s.SmallerIsBetter {
			t.Errorf("%s: searcher metric %q smaller_is_better %v", path, s.Metric, s.SmallerIsBetter)
		}
		if s.Name == expconf.SearcherAdaptiveASHA && batches >= 0 {
			if s.TimeMetric != "batches" || s.MaxTime != batches {
				t.Errorf("%s: time_metric %q, max_time %d, --batches %d", path, s.TimeMetric, s.MaxTime, batches)
			}
		} else if s.Name == expconf.SearcherAdaptiveASHA {
			maxSteps := cfg.Hyperparameters["max_steps"]
			if s.TimeMetric != "batches" || maxSteps.Type != expconf.HPConst || asInt(maxSteps.Val) != s.MaxTime {
				t.Errorf("%s: time_metric %q, max_time %d, max_steps %+v", path, s.TimeMetric, s.MaxTime, maxSteps)
			}
		}
	}
}

func asInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return -1
}
