package expconf

import (
	"strings"
	"testing"
)

func TestMasterDefaultsBecomeTheLowestLayer(t *testing.T) {
	layer, err := MasterDefaults(
		map[string]any{"type": "shared_fs", "host_path": "/mnt/ckpt"},
		map[string]any{"image": "pytorch:2", "shm_size_bytes": 4096, "network_mode": "bridge",
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
