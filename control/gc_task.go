package control

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// gcTaskConfig is the task config of a CHECKPOINT_GC task: the experiment's
// environment without its pod spec (the GC pod spec applies), its bind
// mounts, its checkpoint_storage (so the task still knows where to delete
// when the experiment itself is deleted meanwhile; it is shown masked, and
// handed to the task with its secrets in DET_CHECKPOINT_STORAGE), no slots,
// and an entrypoint:
//   - local storage (shared_fs, directory): a shell script that removes each
//     checkpoint's directory, failing when the storage is not there at all;
//     shared_fs is mounted from the host at its own path, directory storage
//     by the GC pod spec;
//   - a bucket: the harness's determined.exec.gc_checkpoints, which deletes
//     each checkpoint's objects with the harness's own storage code (boto3,
//     the Azure SDK, GCS), on the local resource manager and in a GC pod.
func gcTaskConfig(e resolute.Experiment, st *expconf.CheckpointStorageConfig, uuids []string) ([]byte, error) {
	return deleteTaskConfig(e, st, uuids, fmt.Sprintf("%d checkpoints", len(uuids)))
}

// deleteTaskConfig is gcTaskConfig for any paths under the storage (each
// removed whole); what names them in the task's last line.
func deleteTaskConfig(e resolute.Experiment, st *expconf.CheckpointStorageConfig, uuids []string, what string) ([]byte, error) {
	var exp struct {
		Environment map[string]any `json:"environment"`
		BindMounts  []any          `json:"bind_mounts"`
	}
	if err := json.Unmarshal(e.Config, &exp); err != nil {
		return nil, err
	}
	delete(exp.Environment, "pod_spec")
	var entrypoint any
	if dir, err := st.LocalDir(); err == nil {
		if st.SharedFS != nil {
			exp.BindMounts = append(exp.BindMounts, map[string]any{"host_path": dir, "container_path": dir})
		}
		script := "set -e\n" + fmt.Sprintf("[ -d %[1]s ] || { echo checkpoint storage %[1]s is not mounted in this pod >&2; exit 1; }\n", shellQuote(dir))
		for _, u := range uuids {
			script += "rm -rf -- " + shellQuote(filepath.Join(dir, u)) + "\n"
		}
		script += fmt.Sprintf("echo 'deleted %s of experiment %d'\n", what, e.ID)
		entrypoint = script
	} else {
		entrypoint = append([]string{"python3", "-m", "determined.exec.gc_checkpoints"}, uuids...)
	}
	config := map[string]any{"resources": map[string]any{"slots": 0}, "entrypoint": entrypoint}
	if cs := st.Map(); cs != nil {
		config["checkpoint_storage"] = cs
	}
	if exp.Environment != nil {
		config["environment"] = exp.Environment
	}
	if exp.BindMounts != nil {
		config["bind_mounts"] = exp.BindMounts
	}
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	cfg, err := expconf.ParseTask(raw, expconf.TaskCheckpointGC)
	if err != nil {
		return nil, fmt.Errorf("checkpoint GC task config: %w", err)
	}
	return json.Marshal(cfg.Map())
}

// gcStorageEnv is the environment that hands a CHECKPOINT_GC task its
// storage config with its secrets (never part of the shown config).
func gcStorageEnv(cfg *expconf.TaskConfig) (map[string]string, error) {
	if cfg.CheckpointStorage == nil {
		return nil, nil
	}
	raw, err := json.Marshal(cfg.Map()["checkpoint_storage"])
	if err != nil {
		return nil, err
	}
	return map[string]string{"DET_CHECKPOINT_STORAGE": string(raw)}, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
