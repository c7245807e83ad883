package expconf

import (
	"strings"
	"testing"
)

func TestMasterDefaultsBecomeTheLowestLayer(t *testing.T) {
	layer, err := MasterDefaults(
		map[string]any{"type": "shared_fs", "host_path": "/mnt/ckpt"},
		map[string]any{"image": "pytorch:2", "shm_size_bytes": 4096, "preemption_timeout": 90,
			"environment_variables": []any{"A=1"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseExperimentLayers([][]byte{layer, []byte(`
name: x
entrypoint: python3 train.py
searcher: {name: single, metric: loss}
environment: {image: mine:1}
`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Environment.Image.CPU != "mine:1" {
		t.Errorf("the user's image loses to the master's: %+v", cfg.Environment.Image)
	}
	if cfg.CheckpointStorage == nil || cfg.CheckpointStorage.SharedFS == nil || cfg.CheckpointStorage.SharedFS.HostPath != "/mnt/ckpt" {
		t.Errorf("checkpoint storage from the master is missing: %+v", cfg.CheckpointStorage)
	}
	if cfg.PreemptionTimeout == nil || *cfg.PreemptionTimeout != 90 {
		t.Errorf("preemption_timeout did not reach the config: %v", cfg.PreemptionTimeout)
	}
	if cfg.Resources.ShmSize == nil || *cfg.Resources.ShmSize != 4096 {
		t.Errorf("shm_size_bytes did not become resources.shm_size: %v", cfg.Resources.ShmSize)
	}
}

func TestMasterDefaultsRejectUnknownKeys(t *testing.T) {
	_, err := MasterDefaults(nil, map[string]any{"imag": "x"})
	if err == nil || !strings.Contains(err.Error(), "task_container_defaults.imag: unknown key (did you mean image?)") {
		t.Fatalf("error = %v", err)
	}
	_, err = MasterDefaults(map[string]any{"type": "shared_fs"}, nil)
	if err == nil || !strings.Contains(err.Error(), "checkpoint_storage.host_path") {
		t.Fatalf("error = %v", err)
	}
}

func TestTheChartsImageKeysSetTheTaskImages(t *testing.T) {
	layer, err := MasterDefaults(nil, map[string]any{"cpu_image": "python:3.12", "gpu_image": "pytorch:2-cuda"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseExperiment(layer)
	if err != nil {
		t.Fatal(err)
	}
	if img := cfg.Environment.Image; img.CPU != "python:3.12" || img.CUDA != "pytorch:2-cuda" || img.ROCm != DefaultImage {
		t.Errorf("images %+v", img)
	}
	_, err = MasterDefaults(nil, map[string]any{"image": "a:1", "cpu_image": "b:2"})
	if err == nil || !strings.Contains(err.Error(), "task_container_defaults.cpu_image: give image or cpu_image/gpu_image/rocm_image, not both") {
		t.Fatalf("error = %v", err)
	}
}

func TestTaskContainerDefaultsResoluteCannotHonourAreRefusedAtStartUp(t *testing.T) {
	for key, want := range map[string]string{
		"network_mode":             "task_container_defaults.network_mode: not supported: tasks use the host's network",
		"dtrain_network_interface": "task_container_defaults.dtrain_network_interface: not supported",
		"nccl_port_range":          "task_container_defaults.nccl_port_range: not supported",
		"gloo_port_range":          "task_container_defaults.gloo_port_range: not supported",
		"startup_hook":             "task_container_defaults.startup_hook: not supported: put a startup-hook.sh",
		"work_dir":                 "task_container_defaults.work_dir: not supported",
		"kubernetes":               "task_container_defaults.kubernetes: not supported",
		"coscheduling":             "task_container_defaults.coscheduling: not supported",
		"priority_class_name":      "task_container_defaults.priority_class_name: not supported",
		"max_slots_per_pod":        "task_container_defaults.max_slots_per_pod: not supported here",
		"slurm":                    "task_container_defaults.slurm: not supported by Resolute",
		"pbs":                      "task_container_defaults.pbs: not supported by Resolute",
	} {
		_, err := MasterDefaults(nil, map[string]any{key: "x"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", key, err, want)
		}
	}
}
