package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// tutorialPassword is admin's on the tutorial's master (det login needs one).
const tutorialPassword = "mnist-tutorial-pw"

// mnistTutorial is a session of det against a real master, in a copy of
// Determined's mnist_pytorch tutorial with a small MNIST beside it.
type mnistTutorial struct {
	api *client.Client
	det *detCLI
	dir string // the context directory: the tutorial's files and data/
	m   *handlerstest.Master
}

// TestDeterminedsMNISTTutorialRunsUnchanged runs Determined's
// examples/tutorials/mnist_pytorch (train.py with PyTorchTrial and
// pytorch.Trainer, data.py, model.py, const.yaml, adaptive.yaml,
// distributed.yaml) on a real master with two CPU slots, each config
// submitted unchanged with `det experiment create CONFIG .` from the
// tutorial's directory. Its files are not part of this repository: point
// DETERMINED_MNIST_PYTORCH at a directory holding them. The test copies it
// and writes a small MNIST into the copy's data/MNIST/raw, where the
// tutorial's data.py (torchvision's MNIST(root="data", download=True)) finds
// it and downloads nothing.
//
// const.yaml trains 100 batches (train.py's default length, which Trainer.fit
// takes over the config's deprecated searcher.max_length), validates,
// checkpoints, and the checkpoint loads with load_trial_from_checkpoint_path.
// The pause and crash case needs two overrides, passed with --config: a
// length longer than the Trainer's reporting period of 100 batches
// (entrypoint "python3 train.py --batches 400"), because the Trainer stops
// for a pause only at a period's end and at 100 batches the first one is the
// last; and a seed (reproducibility.experiment_seed), because the tutorial's
// config has none and two experiments' metrics are compared.
func TestDeterminedsMNISTTutorialRunsUnchanged(t *testing.T) {
	src := os.Getenv("DETERMINED_MNIST_PYTORCH")
	if src == "" {
		t.Skip("set DETERMINED_MNIST_PYTORCH to a copy of Determined's examples/tutorials/mnist_pytorch")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision, filelock, ruamel.yaml").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch, torchvision, filelock and ruamel.yaml: %v", err)
	}
	// The local resource manager's slots are CPU slots: as many as
	// distributed.yaml asks for (its resources.slots_per_trial), two at
	// least for the runs side by side below.
	slots := 2
	if dist, err := os.ReadFile(filepath.Join(src, "distributed.yaml")); err == nil {
		if m := regexp.MustCompile(`slots_per_trial:\s*(\d+)`).FindSubmatch(dist); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			slots = max(slots, n)
		}
	}
	m := handlerstest.Start(t, handlerstest.Options{Slots: slots, InitialPassword: tutorialPassword})
	tu := newMNISTTutorial(t, m, src)

	t.Run("Const", func(t *testing.T) {
		id := tu.create(t, "const.yaml")
		tu.wait(t, id, resolute.StateCompleted, 4*time.Minute)
		trial := only(t, tu.api, id)
		steps, avgs := validations(t, tu.api, trial.ID)
		if !slices.Equal(steps, []int64{100}) || trial.StepsCompleted != 100 || trial.LatestCheckpoint == "" {
			t.Fatalf("validations at %v, %d batches, checkpoint %q", steps, trial.StepsCompleted, trial.LatestCheckpoint)
		}
		if acc, _ := avgs[0]["accuracy"].(float64); acc < 0.8 {
			t.Fatalf("validation metrics %v", avgs[0])
		}
		t.Logf("const.yaml: validation %v, checkpoint %s", avgs[0], trial.LatestCheckpoint)
		dir := t.TempDir()
		must(t, tu.api.DownloadCheckpoint(t.Context(), trial.LatestCheckpoint, dir))
		for _, name := range []string{"state_dict.pth", "trial_state.pkl", "load_data.json", "metadata.json",
			"code/train.py", "code/data.py", "code/model.py", "code/const.yaml"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("the checkpoint lacks %s: %v", name, err)
			}
		}
		// The checkpoint rebuilds the tutorial's MNistTrial from its code/.
		load := exec.Command("/usr/bin/python3", "-c", `import sys
from determined import pytorch
trial = pytorch.load_trial_from_checkpoint_path(sys.argv[1])
print(type(trial).__name__, type(trial.model).__name__, sum(p.numel() for p in trial.model.parameters()))`, dir)
		load.Env = append(os.Environ(), "PYTHONPATH="+harnessDir(t), "PYTHONDONTWRITEBYTECODE=1")
		load.Dir = t.TempDir()
		out, err := load.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "MNistTrial Sequential ") {
			t.Fatalf("load_trial_from_checkpoint_path: %v\n%s", err, out)
		}
	})

	t.Run("PausedThenCrashedResumesFromItsCheckpoint", func(t *testing.T) {
		long := []string{"--config", "entrypoint=python3 train.py --batches 400",
			"--config", "reproducibility.experiment_seed=11"}
		// The uninterrupted run and the interrupted one side by side, a
		// slot each.
		ref := tu.create(t, "const.yaml", long...)
		id := tu.create(t, "const.yaml", long...)
		trial := only(t, tu.api, id)
		tu.waitTraining(t, trial.ID, 1)
		must(t, tu.api.ExperimentAction(t.Context(), id, "pause"))
		tu.wait(t, id, resolute.StatePaused, 3*time.Minute)
		// The experiment is paused at once; its trial's run checkpoints and
		// exits after.
		paused := tu.waitTrial(t, id, resolute.StatePaused)
		if paused.LatestCheckpoint == "" || paused.StepsCompleted == 0 || paused.StepsCompleted >= 400 {
			t.Fatalf("paused at %d batches with checkpoint %q: want a checkpoint before the end; logs:\n%s\nmaster:\n%s",
				paused.StepsCompleted, paused.LatestCheckpoint, trialLogs(t, tu.api, id), tu.masterLog())
		}

		// Activated, it resumes; killed mid-run, the restart resumes from
		// the same (latest) checkpoint.
		must(t, tu.api.ExperimentAction(t.Context(), id, "activate"))
		reported := len(tu.training(t, trial.ID))
		tu.waitTraining(t, trial.ID, reported+1)
		pid := tu.m.TrainProcess("DET_TRIAL_ID", strconv.FormatInt(trial.ID, 10))
		if pid == 0 {
			t.Fatalf("no process of trial %d's train.py; logs:\n%s", trial.ID, trialLogs(t, tu.api, id))
		}
		must(t, syscall.Kill(pid, syscall.SIGKILL))
		tu.wait(t, id, resolute.StateCompleted, 4*time.Minute)
		tu.wait(t, ref, resolute.StateCompleted, 4*time.Minute)

		done := only(t, tu.api, id)
		if done.Restarts != 1 || done.StepsCompleted != 400 {
			t.Fatalf("trial ended after %d restarts at %d batches, want 1 and 400", done.Restarts, done.StepsCompleted)
		}
		restored := regexp.MustCompile(`Restoring trial from checkpoint (\S+)`).FindAllStringSubmatch(trialLogs(t, tu.api, id), -1)
		if len(restored) != 2 || restored[0][1] != paused.LatestCheckpoint || restored[1][1] != paused.LatestCheckpoint {
			t.Fatalf("restores %v, want two from the pause's checkpoint %s", restored, paused.LatestCheckpoint)
		}
		steps, got := validations(t, tu.api, trial.ID)
		refSteps, want := validations(t, tu.api, only(t, tu.api, ref).ID)
		if !slices.Equal(steps, []int64{400}) || !slices.Equal(refSteps, []int64{400}) {
			t.Fatalf("validations at %v, uninterrupted at %v; want [400]", steps, refSteps)
		}
		for _, k := range []string{"validation_loss", "accuracy"} {
			g, _ := got[0][k].(float64)
			w, _ := want[0][k].(float64)
			if !near(g, w) {
				t.Errorf("%s: %v paused at %d and crashed, %v uninterrupted", k, g, paused.StepsCompleted, w)
			}
		}
		// Training losses too, the last report of each step (the killed run
		// reported one that its restart reported again).
		gotLoss, wantLoss := tu.trainingLoss(t, trial.ID), tu.trainingLoss(t, only(t, tu.api, ref).ID)
		if len(gotLoss) != 4 || len(wantLoss) != 4 {
			t.Fatalf("training losses %v, uninterrupted %v: want 4 steps each", gotLoss, wantLoss)
		}
		for step, w := range wantLoss {
			if g, ok := gotLoss[step]; !ok || !near(g, w) {
				t.Errorf("training loss at %d: %v paused and crashed, %v uninterrupted", step, g, w)
			}
		}
		t.Logf("paused at %d batches, killed pid %d after %d training reports; validation %v, uninterrupted %v; training loss %v, uninterrupted %v",
			paused.StepsCompleted, pid, reported+1, got[0], want[0], gotLoss, wantLoss)
	})

	t.Run("Adaptive", func(t *testing.T) {
		id := tu.create(t, "adaptive.yaml")
		tu.wait(t, id, resolute.StateCompleted, 12*time.Minute)
		trials, err := tu.api.ExperimentTrials(t.Context(), id)
		must(t, err)
		if len(trials) != 16 {
			t.Fatalf("%d trials, want adaptive.yaml's max_trials 16", len(trials))
		}
		var lengths []int64
		for _, tr := range trials {
			steps, _ := validations(t, tu.api, tr.ID)
			if tr.State != resolute.StateCompleted || len(steps) == 0 || tr.LatestCheckpoint == "" {
				t.Errorf("trial %d: %s at %d batches, validations %v, checkpoint %q", tr.ID, tr.State, tr.StepsCompleted, steps, tr.LatestCheckpoint)
			}
			lengths = append(lengths, tr.StepsCompleted)
		}
		t.Logf("16 trials completed, at %v batches", lengths)
	})

	t.Run("DistributedOnTwoSlots", func(t *testing.T) {
		id := tu.create(t, "distributed.yaml")
		tu.wait(t, id, resolute.StateCompleted, 4*time.Minute)
		trial := only(t, tu.api, id)
		steps, avgs := validations(t, tu.api, trial.ID)
		if !slices.Equal(steps, []int64{100}) || trial.LatestCheckpoint == "" {
			t.Fatalf("validations at %v (the chief reports), checkpoint %q", steps, trial.LatestCheckpoint)
		}
		// torch.distributed says so when both of torch_distributed's
		// workers have joined the process group.
		logs := trialLogs(t, tu.api, id)
		if !strings.Contains(logs, "Rank 1: Completed store-based barrier") || !strings.Contains(logs, "with 2 nodes") {
			t.Errorf("rank 1 did not join a group of 2: torch_distributed did not start two workers; logs:\n%s", logs)
		}
		t.Logf("two slots: validation %v", avgs[0])
	})
}

// newMNISTTutorial copies the tutorial at src, writes a small MNIST into
// its data/, builds det and logs it in to m.
func newMNISTTutorial(t *testing.T, m *handlerstest.Master, src string) *mnistTutorial {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnist_pytorch")
	must(t, os.CopyFS(dir, os.DirFS(src)))
	// The copy must not carry data or checkpoints from a run of its own.
	for _, p := range []string{"data", "checkpoints", "__pycache__"} {
		must(t, os.RemoveAll(filepath.Join(dir, p)))
	}
	mk := exec.Command("/usr/bin/python3", filepath.Join(harnessDir(t), "tests", "tiny_mnist.py"), filepath.Join(dir, "data"))
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("tiny_mnist.py: %v\n%s", err, out)
	}
	login, err := client.New(m.URL).Login(t.Context(), "admin", tutorialPassword)
	must(t, err)
	return &mnistTutorial{
		api: client.New(m.URL, client.WithToken(login.Token)),
		det: newDetCLI(t, m, tutorialPassword),
		dir: dir,
		m:   m,
	}
}

// create submits config from the tutorial's directory with it as the
// context, as `det experiment create const.yaml .` does.
func (tu *mnistTutorial) create(t *testing.T, config string, flags ...string) int64 {
	t.Helper()
	return tu.det.create(t, tu.dir, config, flags...)
}

// wait waits for experiment id to be in state want.
func (tu *mnistTutorial) wait(t *testing.T, id int64, want string, within time.Duration) {
	t.Helper()
	ptWait(t, tu.api, id, want, within)
}

// waitTrial waits for experiment id's only trial to be in state want with
// no run (allocation) left.
func (tu *mnistTutorial) waitTrial(t *testing.T, id int64, want string) resolute.Trial {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		trial := only(t, tu.api, id)
		_, err := tu.m.DB.CurrentTrialAllocation(t.Context(), trial.ID)
		if err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
			t.Fatal(err)
		}
		if trial.State == want && err != nil {
			return trial
		}
		if time.Now().After(deadline) {
			t.Fatalf("trial %d is %s after 3 minutes, want %s; logs:\n%s", trial.ID, trial.State, want, trialLogs(t, tu.api, id))
		}
	}
}

// masterLog is the master's log.
func (tu *mnistTutorial) masterLog() string {
	lines, _ := tu.m.Logs.Since(0, 1000)
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s %s\n", l.Time.Format(time.TimeOnly), l.Level, l.Message)
	}
	return b.String()
}

// training is trial id's training reports.
func (tu *mnistTutorial) training(t *testing.T, id int64) []resolute.MetricsReport {
	t.Helper()
	ms, err := tu.api.TrialMetrics(t.Context(), id, "training")
	must(t, err)
	return ms
}

// waitTraining waits until trial id has reported training metrics n times.
func (tu *mnistTutorial) waitTraining(t *testing.T, id int64, n int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); len(tu.training(t, id)) < n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("trial %d reported training metrics fewer than %d times in 3 minutes", id, n)
		}
	}
}

// trainingLoss is trial id's training loss by step, the last report of each.
func (tu *mnistTutorial) trainingLoss(t *testing.T, id int64) map[int64]float64 {
	t.Helper()
	loss := map[int64]float64{}
	for _, r := range tu.training(t, id) {
		var m struct {
			Avg map[string]float64 `json:"avg_metrics"`
		}
		must(t, json.Unmarshal(r.Metrics, &m))
		loss[r.StepsCompleted] = m.Avg["loss"]
	}
	return loss
}

// near says whether a and b agree to a millionth of their size.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b))
}

// harnessDir is the repository's harness/ (tests run in e2e/).
func harnessDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../harness")
	must(t, err)
	if _, err := fs.Stat(os.DirFS(dir), "determined/__init__.py"); err != nil {
		t.Fatalf("no harness at %s: %v", dir, err)
	}
	return dir
}
