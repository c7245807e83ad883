package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestABoundPoolRunsOnlyItsWorkspacesExperiments is the whole path through
// det, the API and real trial processes: the pool "team" is bound to the
// workspace vision, whose settings send experiments there and store their
// checkpoints in a directory of its own. An experiment of speech that asks
// for team is refused with a message saying whose it is; vision's
// experiment, naming no pool and no storage, runs on team and checkpoints
// into vision's storage. The bindings are in the master's log.
func TestABoundPoolRunsOnlyItsWorkspacesExperiments(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{Slots: 2, ExtraPools: []string{"team"}})
	c.loginAdmin()
	// Tasks write as their own users: the storage is shared as /tmp is,
	// and reachable (t.TempDir's parent is private to the test's user).
	storage, err := os.MkdirTemp("", "vision-checkpoints-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(storage) })
	os.Chmod(storage, os.ModeSticky|0o777)
	storageJSON, _ := json.Marshal(map[string]any{"type": "shared_fs", "host_path": storage})

	var vision resolute.Workspace
	out := c.ok("", "workspace", "create", "vision", "--default-compute-pool", "team",
		"--checkpoint-storage-config", string(storageJSON), "--json")
	if err := json.Unmarshal([]byte(out), &vision); err != nil {
		t.Fatal(err)
	}
	if vision.DefaultComputePool != "team" || vision.CheckpointStorageConfig["host_path"] != storage {
		t.Fatalf("created %+v", vision)
	}
	c.ok("", "workspace", "create", "speech")
	c.ok("", "project", "create", "vision", "main")
	c.ok("", "project", "create", "speech", "main")

	if got := c.ok("", "rp", "bind", "team", "vision"); got != "Resource pool team bound to vision.\n" {
		t.Errorf("bind: %q", got)
	}
	if got := c.ok("", "resource-pool", "bindings", "list-workspaces", "team"); !strings.Contains(got, "vision") {
		t.Errorf("list-workspaces:\n%s", got)
	}
	for ws, want := range map[string]string{"speech": "default\n", "vision": "default, team\n"} {
		if got := c.ok("", "workspace", "list-pools", ws); !strings.HasSuffix(strings.TrimRight(got, " \n")+"\n", want) {
			t.Errorf("list-pools %s:\n%s", ws, got)
		}
	}
	if r := c.run("", "rp", "bind", "default", "speech"); r.code == 0 || !strings.Contains(r.stderr, "default pools cannot be bound") {
		t.Errorf("binding the default pool: %+v", r)
	}

	dir := contextDir(t)
	asks := writeConfig(t, constConfig+"workspace: speech\nproject: main\nresources: {resource_pool: team}\n")
	r := c.run("", "experiment", "create", asks, dir)
	if r.code == 0 || !strings.Contains(r.stderr, `resource pool "team" is bound to workspace(s) vision; workspace "speech" cannot use it`) {
		t.Fatalf("speech's experiment on team: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig+"workspace: vision\nproject: main\n"), dir))
	if r := c.run("", "e", "wait", id, "--polling-interval", "0.2"); r.stdout != "Experiment "+id+" terminated with state COMPLETED\n" {
		t.Fatalf("wait: %q\n%s", r.stdout, c.ok("", "trial", "logs", "1"))
	}
	var described struct{ Experiment resolute.Experiment }
	if err := json.Unmarshal([]byte(c.ok("", "experiment", "describe", id, "--json")), &described); err != nil {
		t.Fatal(err)
	}
	if e := described.Experiment; e.ResourcePool != "team" {
		t.Errorf("vision's experiment ran in pool %q, want team (the workspace's default)", e.ResourcePool)
	}
	var cps []resolute.Checkpoint
	if err := json.Unmarshal([]byte(c.ok("", "experiment", "list-checkpoints", id, "--json")), &cps); err != nil {
		t.Fatal(err)
	}
	if len(cps) == 0 {
		t.Fatal("the trial left no checkpoint")
	}
	// The latest checkpoint is kept whatever the garbage collection (which
	// may be deleting the others meanwhile) does.
	inVision := 0
	for _, cp := range cps {
		if _, err := os.Stat(filepath.Join(storage, cp.UUID)); err == nil {
			inVision++
		}
		if _, err := os.Stat(filepath.Join(c.m.CheckpointDir, cp.UUID)); err == nil {
			t.Errorf("checkpoint %s went to the master's storage", cp.UUID)
		}
	}
	if inVision == 0 {
		t.Errorf("none of the checkpoints %+v is in vision's storage %s", cps, storage)
	}

	c.ok("", "rp", "unbind", "team", "vision")
	lines, _ := c.m.Logs.Since(0, 0)
	var log strings.Builder
	for _, l := range lines {
		log.WriteString(l.Message + "\n")
	}
	for _, want := range []string{"resource pool bound pool=team workspaces=vision by=admin", "resource pool unbound pool=team workspaces=vision by=admin",
		"workspace settings changed workspace=vision"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the master's log lacks %q:\n%s", want, log.String())
		}
	}
}

func TestWorkspaceSettingsFromTheCLI(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{Slots: 2, ExtraPools: []string{"team"}})
	c.loginAdmin()
	c.ok("", "workspace", "create", "vision")
	storageFile := filepath.Join(t.TempDir(), "storage.yaml")
	os.WriteFile(storageFile, []byte("type: s3\nbucket: vision\nsecret_key: s3cret\naccess_key: AKIA\n"), 0o600)
	c.ok("", "workspace", "edit", "vision", "--default-aux-pool", "team", "--checkpoint-storage-config-file", storageFile,
		"--agent-uid", "3000", "--agent-gid", "3000", "--agent-user", "vision", "--agent-group", "vision")
	text := c.ok("", "workspace", "describe", "vision")
	for _, want := range []string{"Agent Uid", "Default Aux Pool", "3000", "team", `"secret_key":"********"`} {
		if !strings.Contains(text, want) {
			t.Errorf("describe lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "s3cret") {
		t.Errorf("describe shows the secret:\n%s", text)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"root is refused":                {[]string{"--agent-uid", "0", "--agent-gid", "0", "--agent-user", "root", "--agent-group", "root"}, "never run as root"},
		"both storage flags":             {[]string{"--checkpoint-storage-config", "{}", "--checkpoint-storage-config-file", storageFile}, "not both"},
		"a pool that does not exist":     {[]string{"--default-compute-pool", "nope"}, `pool "nope" does not exist`},
		"nothing to change":              {nil, "nothing to change"},
		"storage experiments would fail": {[]string{"--checkpoint-storage-config", `{"type":"shared_fs"}`}, "host_path"},
	} {
		t.Run(name, func(t *testing.T) {
			r := c.run("", append([]string{"workspace", "edit", "vision"}, tc.args...)...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want it to say %q", r.code, r.stderr, tc.want)
			}
		})
	}
	// The namespace is for Kubernetes: refused here, not ignored.
	if r := c.run("", "workspace", "bindings", "set", "vision", "--namespace", "team-a"); r.code == 0 || !strings.Contains(r.stderr, "runs no Kubernetes pods") {
		t.Errorf("bindings set on the local resource manager: %+v", r)
	}
	if r := c.run("", "workspace", "create", "w2", "--auto-create-namespace"); r.code == 0 || !strings.Contains(r.stderr, "not supported") {
		t.Errorf("--auto-create-namespace: %+v", r)
	}
	// {} removes the storage.
	c.ok("", "workspace", "edit", "vision", "--checkpoint-storage-config", "{}")
	if text := c.ok("", "workspace", "describe", "vision"); strings.Contains(text, "bucket") {
		t.Errorf("storage left after {}:\n%s", text)
	}
}
