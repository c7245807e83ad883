package control_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/expconf"
)

func ck(uuid string, trial, steps int64, score float64, scored bool) control.ScoredCheckpoint {
	return control.ScoredCheckpoint{Checkpoint: resolute.Checkpoint{UUID: uuid, TrialID: trial, StepsCompleted: steps}, Score: score, Scored: scored}
}

// TestCheckpointGCKeepsWhatThePolicySays: the GC policy is the config's
// checkpoint_policy (best, all or none) and checkpoint_storage's
// save_experiment_best, save_trial_best and save_trial_latest.
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

// TestACheckpointGCTaskRemovesExactlyItsCheckpoints builds the config of a
// CHECKPOINT_GC task and runs its entrypoint with sh: the named checkpoint
// directories go, the others stay, even under a path with a quote in it; the
// experiment's image and bind mounts come along and the storage is mounted.
func TestACheckpointGCTaskRemovesExactlyItsCheckpoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's storage")
	for _, u := range []string{"a1", "b2", "c3"} {
		if err := os.MkdirAll(filepath.Join(dir, u, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := resolute.Experiment{ID: 7, Config: []byte(`{"environment": {"image": {"cpu": "img:1", "cuda": "img:1-gpu"},
			"pod_spec": {"spec": {"priorityClassName": "trials-only"}}},
		"bind_mounts": [{"host_path": "/data", "container_path": "/data", "read_only": true}]}`)}
	raw, err := control.GCTaskConfig(e, &expconf.CheckpointStorageConfig{Type: "shared_fs", SharedFS: &expconf.SharedFSStorage{HostPath: dir}}, []string{"a1", "c3"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := expconf.ParseTask(raw, expconf.TaskCheckpointGC)
	if err != nil {
		t.Fatalf("the task's config does not parse: %v\n%s", err, raw)
	}
	if cfg.Environment.PodSpec != nil {
		t.Errorf("the GC task took the trials' pod spec: %v", cfg.Environment.PodSpec)
	}
	if cfg.Slots != 0 || cfg.Environment.Image.CPU != "img:1" || len(cfg.BindMounts) != 2 ||
		cfg.BindMounts[1].HostPath != dir || cfg.BindMounts[1].ContainerPath != dir || cfg.BindMounts[1].ReadOnly {
		t.Fatalf("config: slots %d, image %q, bind mounts %+v", cfg.Slots, cfg.Environment.Image.CPU, cfg.BindMounts)
	}
	out, err := exec.Command("sh", "-c", cfg.Entrypoint.Shell).CombinedOutput()
	if err != nil {
		t.Fatalf("entrypoint: %v\n%s\n%s", err, out, cfg.Entrypoint.Shell)
	}
	if !strings.Contains(string(out), "deleted 2 checkpoints of experiment 7") {
		t.Errorf("output %q", out)
	}
	for u, want := range map[string]bool{"a1": false, "b2": true, "c3": false} {
		if _, err := os.Stat(filepath.Join(dir, u)); (err == nil) != want {
			t.Errorf("checkpoint %s: exists %v, want %v", u, err == nil, want)
		}
	}
}

// TestACheckpointGCTaskFailsWhereItsStorageIsNotMounted: directory storage
// is not mounted from the host (the GC pod spec must mount it); where it is
// missing, the task fails, so that no checkpoint is marked deleted.
func TestACheckpointGCTaskFailsWhereItsStorageIsNotMounted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-mounted")
	e := resolute.Experiment{ID: 8, Config: []byte(`{}`)}
	raw, err := control.GCTaskConfig(e, &expconf.CheckpointStorageConfig{Type: "directory", Directory: &expconf.DirectoryStorage{ContainerPath: dir}}, []string{"a1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := expconf.ParseTask(raw, expconf.TaskCheckpointGC)
	if err != nil {
		t.Fatalf("the task's config does not parse: %v\n%s", err, raw)
	}
	if len(cfg.BindMounts) != 0 {
		t.Errorf("directory storage got a host mount: %+v", cfg.BindMounts)
	}
	out, err := exec.Command("sh", "-c", cfg.Entrypoint.Shell).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not mounted in this pod") {
		t.Fatalf("entrypoint without its storage: %v\n%s", err, out)
	}
}
