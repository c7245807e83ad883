package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestDeleteTBFilesRemovesTheExperimentsTensorBoardFilesAndNothingElse:
// after a trial ran, its TensorBoard files (where the harness puts them,
// owned by the trial's user) go, by a task, and its checkpoints stay; an
// experiment still running, or another user, is refused.
func TestDeleteTBFilesRemovesTheExperimentsTensorBoardFilesAndNothingElse(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t), "-f"))
	c.ok("", "e", "wait", id, "--polling-interval", "0.2")
	var info resolute.MasterInfo
	json.Unmarshal([]byte(c.ok("", "master", "info", "--json")), &info)

	// The trial's checkpoint says whose files these are: its latest, which
	// the garbage collection after the experiment (which may be deleting
	// the others meanwhile) keeps.
	var cps []resolute.Checkpoint
	if err := json.Unmarshal([]byte(c.ok("", "experiment", "list-checkpoints", id, "--json")), &cps); err != nil {
		t.Fatal(err)
	}
	var ckpt string
	var latest int64 = -1
	for _, cp := range cps {
		if cp.StepsCompleted > latest {
			ckpt, latest = filepath.Join(c.m.CheckpointDir, cp.UUID), cp.StepsCompleted
		}
	}
	fi, err := os.Stat(ckpt)
	if err != nil {
		t.Fatalf("no checkpoint in %s: %v", c.m.CheckpointDir, err)
	}
	uid, gid := int(fi.Sys().(*syscall.Stat_t).Uid), int(fi.Sys().(*syscall.Stat_t).Gid)
	mine := filepath.Join(c.m.CheckpointDir, info.ClusterID, "tensorboard", "experiment", id)
	other := filepath.Join(c.m.CheckpointDir, info.ClusterID, "tensorboard", "experiment", "999999")
	for _, dir := range []string{filepath.Join(mine, "trial", "1"), other} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "events.out.tfevents.1"), []byte("scalars"), 0o644)
	}
	filepath.Walk(filepath.Join(c.m.CheckpointDir, info.ClusterID), func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, uid, gid)
		}
		return err
	})

	out := c.ok("", "experiment", "delete-tb-files", id)
	m := regexp.MustCompile(`^Deleting the TensorBoard files of experiment ` + id + `: task (\S+) \(det task logs`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("det experiment delete-tb-files: %q", out)
	}
	task := m[1]
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var done *resolute.Task
		for _, tk := range c.tasks("task", "list", "--all") {
			if tk.ID == task && tk.State == resolute.TaskTerminated {
				done = &tk
			}
		}
		if done != nil {
			if done.ExitCode == nil || *done.ExitCode != 0 {
				t.Fatalf("the task failed: %+v\n%s", done, c.ok("", "task", "logs", task))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never ended", task)
		}
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("the experiment's TensorBoard files are still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "events.out.tfevents.1")); err != nil {
		t.Errorf("another experiment's TensorBoard files went too: %v", err)
	}
	if _, err := os.Stat(ckpt); err != nil {
		t.Errorf("the checkpoint went too: %v", err)
	}

	paused := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t), "--paused"))
	if r := c.run("", "experiment", "delete-tb-files", paused); r.code != 1 || !strings.Contains(r.stderr, "once it has ended") {
		t.Errorf("a paused experiment: exit %d %s", r.code, r.stderr)
	}
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	if r := c.run("", "experiment", "delete-tb-files", id); r.code != 1 || !strings.Contains(r.stderr, "only they or an administrator") {
		t.Errorf("another user: exit %d %s", r.code, r.stderr)
	}
}
