package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// pytorchTrialDir is the example written with Determined's PyTorch Trial API.
const pytorchTrialDir = "../examples/pytorch-trial"

// needTorch skips unless Debian's Python, which tasks run, has torch and
// scikit-learn (scripts/setup.sh test installs them).
func needTorch(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, sklearn").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch and sklearn: %v", err)
	}
}

// ptConfig is the example's config file with its text replaced pairwise.
func ptConfig(t *testing.T, name string, replace ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pytorchTrialDir, name))
	must(t, err)
	return strings.NewReplacer(replace...).Replace(string(data))
}

// ptRun submits config with the example's code and returns the experiment.
func ptRun(t *testing.T, api *client.Client, config string) int64 {
	t.Helper()
	code := tgzDir(t, pytorchTrialDir)
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: config}}
	created, err := api.CreateExperiment(t.Context(), req, bytes.NewReader(code), int64(len(code)), nil)
	must(t, err)
	return created.Experiment.ID
}

// ptWait waits until experiment id is in state want (failing at another
// final state, with the trials' logs).
func ptWait(t *testing.T, api *client.Client, id int64, want string, within time.Duration) resolute.Experiment {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		e, err := api.Experiment(t.Context(), id)
		must(t, err)
		if e.State == want {
			return e
		}
		if resolute.Terminal(e.State) || time.Now().After(deadline) {
			t.Fatalf("experiment %d is %s, want %s; logs:\n%s", id, e.State, want, trialLogs(t, api, id))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// trialLogs are the logs of experiment id's trials.
func trialLogs(t *testing.T, api *client.Client, id int64) string {
	trials, _ := api.ExperimentTrials(t.Context(), id)
	var logs strings.Builder
	for _, tr := range trials {
		api.TrialLogs(t.Context(), tr.ID, false, "", "", func(l resolute.TaskLog) error {
			logs.WriteString(l.Log + "\n")
			return nil
		})
	}
	return logs.String()
}

// validations are a trial's validation reports: steps and avg metrics.
func validations(t *testing.T, api *client.Client, trialID int64) ([]int64, []map[string]any) {
	t.Helper()
	reports, err := api.TrialMetrics(t.Context(), trialID, "validation")
	must(t, err)
	var steps []int64
	var avgs []map[string]any
	for _, r := range reports {
		steps = append(steps, r.StepsCompleted)
		var m struct {
			Avg map[string]any `json:"avg_metrics"`
		}
		must(t, json.Unmarshal(r.Metrics, &m))
		avgs = append(avgs, m.Avg)
	}
	return steps, avgs
}

// oneTrialLogs is trial id's log.
func oneTrialLogs(t *testing.T, api *client.Client, id int64) string {
	t.Helper()
	var logs strings.Builder
	must(t, api.TrialLogs(t.Context(), id, false, "", "", func(l resolute.TaskLog) error {
		logs.WriteString(l.Log + "\n")
		return nil
	}))
	return logs.String()
}

func only(t *testing.T, api *client.Client, id int64) resolute.Trial {
	t.Helper()
	trials, err := api.ExperimentTrials(t.Context(), id)
	must(t, err)
	if len(trials) != 1 {
		t.Fatalf("experiment %d has %d trials, want 1", id, len(trials))
	}
	return trials[0]
}

// TestThePyTorchTrialExampleRunsOnAMaster runs examples/pytorch-trial (a
// PyTorchTrial trained by pytorch.Trainer) on a real master with two CPU
// slots: a single trial that reports, validates and checkpoints in
// Determined's layout; the same trial paused and resumed, with the same
// validation metrics as the uninterrupted run; an adaptive ASHA search that
// stops trials at its rung (each checkpoints and exits 0); two
// slots through determined.launch.torch_distributed; and the legacy
// `entrypoint: model_def:DigitsTrial`.
func TestThePyTorchTrialExampleRunsOnAMaster(t *testing.T) {
	needTorch(t)
	m := handlerstest.Start(t, handlerstest.Options{})
	login, err := client.New(m.URL).Login(t.Context(), "admin", "")
	must(t, err)
	api := client.New(m.URL, client.WithToken(login.Token))
	// The same trial seed for the runs whose metrics are compared.
	seeded := func(config string) string { return config + "reproducibility: {experiment_seed: 7}\n" }
	long := []string{"--batches 160", "--batches 600"}

	var want []map[string]any
	t.Run("Const", func(t *testing.T) {
		id := ptRun(t, api, seeded(ptConfig(t, "const.yaml", long...)))
		ptWait(t, api, id, resolute.StateCompleted, 3*time.Minute)
		trial := only(t, api, id)
		steps, avgs := validations(t, api, trial.ID)
		var wantSteps []int64
		for s := int64(40); s <= 600; s += 40 {
			wantSteps = append(wantSteps, s)
		}
		if !slices.Equal(steps, wantSteps) || trial.StepsCompleted != 600 {
			t.Fatalf("validations at %v, %d steps", steps, trial.StepsCompleted)
		}
		last := avgs[len(avgs)-1]
		if acc, _ := last["accuracy"].(float64); acc < 0.8 || last["batches"] != float64(600) {
			t.Fatalf("last validation %v", last)
		}
		want = avgs
		dir := t.TempDir()
		must(t, api.DownloadCheckpoint(t.Context(), trial.LatestCheckpoint, dir))
		for _, name := range []string{"state_dict.pth", "trial_state.pkl", "load_data.json", "metadata.json", "code/model_def.py", "code/train.py"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("the checkpoint lacks %s: %v", name, err)
			}
		}
	})

	t.Run("PausedAndResumed", func(t *testing.T) {
		if want == nil {
			t.Skip("Const failed")
		}
		id := ptRun(t, api, seeded(ptConfig(t, "const.yaml", long...)))
		trial := only(t, api, id)
		// Pause once training has reported, well before its 600 batches.
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			ms, err := api.TrialMetrics(t.Context(), trial.ID, "training")
			must(t, err)
			if len(ms) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no training metrics within 2 minutes")
			}
		}
		must(t, api.ExperimentAction(t.Context(), id, "pause"))
		ptWait(t, api, id, resolute.StatePaused, 2*time.Minute)
		// The experiment is paused at once; its trial's run checkpoints and
		// exits after it.
		paused := only(t, api, id)
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			_, err := m.DB.CurrentTrialAllocation(t.Context(), paused.ID)
			if resolute.ErrorCode(err) == resolute.ENotFound {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the paused trial's run still runs after 2 minutes; logs:\n%s", trialLogs(t, api, id))
			}
		}
		paused = only(t, api, id)
		if paused.LatestCheckpoint == "" || paused.StepsCompleted >= 600 {
			t.Fatalf("paused trial at %d steps, checkpoint %q: want a checkpoint before the end; logs:\n%s",
				paused.StepsCompleted, paused.LatestCheckpoint, trialLogs(t, api, id))
		}
		must(t, api.ExperimentAction(t.Context(), id, "activate"))
		ptWait(t, api, id, resolute.StateCompleted, 3*time.Minute)
		steps, avgs := validations(t, api, trial.ID)
		if len(avgs) != len(want) {
			t.Fatalf("validations at %v, want %d", steps, len(want))
		}
		for i := range want {
			for _, k := range []string{"validation_loss", "accuracy"} {
				g, _ := avgs[i][k].(float64)
				w, _ := want[i][k].(float64)
				if d := g - w; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s at %d: %v after a pause, %v uninterrupted (paused at %d)", k, steps[i], g, w, paused.StepsCompleted)
				}
			}
		}
	})

	t.Run("AdaptiveASHA", func(t *testing.T) {
		// adaptive.yaml: 8 trials in one bracket, a rung at 320 batches
		// keeping the top quarter, 1280 at most. (The Trainer trains these
		// small batches so fast that a stop must leave it room to arrive.)
		id := ptRun(t, api, ptConfig(t, "adaptive.yaml"))
		ptWait(t, api, id, resolute.StateCompleted, 8*time.Minute)
		trials, err := api.ExperimentTrials(t.Context(), id)
		must(t, err)
		if len(trials) != 8 {
			t.Fatalf("%d trials, want 8", len(trials))
		}
		var full, stopped []int64
		for _, tr := range trials {
			steps, _ := validations(t, api, tr.ID)
			// Restarts 0: every run exited 0, the stopped ones too.
			if tr.State != resolute.StateCompleted || tr.Restarts != 0 || len(steps) < 8 || steps[7] != 320 || tr.LatestCheckpoint == "" {
				t.Errorf("trial %d: %s after %d restarts, validations %v, checkpoint %q", tr.ID, tr.State, tr.Restarts, steps, tr.LatestCheckpoint)
				continue
			}
			if tr.StepsCompleted == 1280 {
				full = append(full, tr.ID)
				continue
			}
			// ASHA stopped it at the rung: the master asked the trial to
			// stop, the Trainer saw it at its next period's end,
			// checkpointed there and exited.
			stopped = append(stopped, tr.StepsCompleted)
			ckpts, err := api.TrialCheckpoints(t.Context(), tr.ID)
			must(t, err)
			last := ckpts[len(ckpts)-1]
			logs := oneTrialLogs(t, api, tr.ID)
			if tr.StepsCompleted < 320 || last.UUID != tr.LatestCheckpoint ||
				last.StepsCompleted != tr.StepsCompleted || !strings.Contains(logs, "preempted: checkpointing and exiting") {
				t.Errorf("stopped trial %d at %d batches, last checkpoint %s at %d; logs:\n%s",
					tr.ID, tr.StepsCompleted, last.UUID, last.StepsCompleted, logs)
			}
		}
		if len(full) == 0 || len(stopped) == 0 {
			t.Fatalf("%d trials trained the whole 1280 batches, %d were stopped: want some of each", len(full), len(stopped))
		}
		t.Logf("%d trials trained 1280 batches, ASHA stopped %d early, at %v batches", len(full), len(stopped), stopped)
	})

	t.Run("TwoSlots", func(t *testing.T) {
		id := ptRun(t, api, ptConfig(t, "distributed.yaml"))
		ptWait(t, api, id, resolute.StateCompleted, 3*time.Minute)
		trial := only(t, api, id)
		steps, _ := validations(t, api, trial.ID)
		if !slices.Equal(steps, []int64{40, 80, 120, 160}) || trial.LatestCheckpoint == "" {
			t.Fatalf("validations at %v (only the chief reports), checkpoint %q", steps, trial.LatestCheckpoint)
		}
	})

	t.Run("LegacyTrialClassEntrypoint", func(t *testing.T) {
		for _, slots := range []string{"1", "2"} {
			config := ptConfig(t, "const.yaml",
				"entrypoint: python3 train.py --batches 160", "entrypoint: model_def:DigitsTrial",
				"searcher:", "resources: {slots_per_trial: "+slots+"}\nmin_validation_period: {batches: 40}\nsearcher:\n  max_length: {batches: 80}")
			id := ptRun(t, api, config)
			ptWait(t, api, id, resolute.StateCompleted, 3*time.Minute)
			steps, _ := validations(t, api, only(t, api, id).ID)
			if !slices.Equal(steps, []int64{40, 80}) {
				t.Errorf("%s slots: validations at %v", slots, steps)
			}
		}
	})
}
