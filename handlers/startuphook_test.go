package handlers_test

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/harness"
)

// contextOf packs files as a context directory, as `det` uploads one.
func contextOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tgz(t, dir)
}

// createWithContext creates an experiment of config with a context and
// returns its ID.
func createWithContext(t *testing.T, m *handlerstest.Master, token, config string, files map[string][]byte) int64 {
	t.Helper()
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: config},
		ContextTgz: contextOf(t, files)}
	var created resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	return created.Experiment.ID
}

func TestAStartupHookThatFailsFailsTheTrialSayingSo(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	token := login(t, m, "admin", "")
	config := "name: hook\nentrypoint: echo the entrypoint ran\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n"
	id := createWithContext(t, m, token, config, map[string][]byte{"startup-hook.sh": []byte("echo installing\nexit 3\n")})
	e := waitFor(t, m, token, id, 60*time.Second)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(id)+"/trials", token, "", &trials)
	logs := trialLogs(t, m, token, trials)
	if e.State != resolute.StateError || len(trials.Trials) != 1 || trials.Trials[0].State != resolute.StateError {
		t.Fatalf("experiment %s, trials %+v; logs:\n%s", e.State, trials.Trials, logs)
	}
	for _, want := range []string{"installing", "startup-hook.sh exited with status 3; the task's entrypoint did not run"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the trial's log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "the entrypoint ran") {
		t.Errorf("the entrypoint ran after its hook failed:\n%s", logs)
	}
	allocs, err := m.DB.TrialAllocations(t.Context(), trials.Trials[0].ID)
	if err != nil || len(allocs) != 1 || allocs[0].ExitCode == nil || *allocs[0].ExitCode != 3 {
		t.Fatalf("allocations %+v (%v), want one that exited with 3", allocs, err)
	}
}

// TestAStartupHookPreparesATrialAsDeterminedUsersWriteThem: the hook pip
// installs a package (into the task user's home: Debian's Python takes it)
// and exports a variable; the trial's script sees both and completes.
func TestAStartupHookPreparesATrialAsDeterminedUsersWriteThem(t *testing.T) {
	if err := exec.Command(harness.DefaultPython(), "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("the task Python %s has no pip (Debian's python3-pip): %v", harness.DefaultPython(), err)
	}
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	token := login(t, m, "admin", "")
	config := "name: hook\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n"
	id := createWithContext(t, m, token, config, map[string][]byte{
		"startup-hook.sh": []byte("python3 -m pip install --no-index --no-cache-dir --quiet ./hookdemo-1.0-py3-none-any.whl\n" +
			"export DATA_DIR=\"$PWD/data\"\nmkdir -p \"$DATA_DIR\"\necho 'hook: ready'\n"),
		"hookdemo-1.0-py3-none-any.whl": pureWheel(t, "hookdemo", `GREETING = "hello from a pip-installed package"`),
		"train.py": []byte("import os, hookdemo\n" +
			"print(hookdemo.GREETING, 'in', 'home' if hookdemo.__file__.startswith(os.environ['HOME'] + '/.local/') else hookdemo.__file__)\n" +
			"print('data dir exists:', os.path.isdir(os.environ['DATA_DIR']))\n"),
	})
	e := waitFor(t, m, token, id, 90*time.Second)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(id)+"/trials", token, "", &trials)
	logs := trialLogs(t, m, token, trials)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s; logs:\n%s", e.State, logs)
	}
	for _, want := range []string{"hook: ready", "hello from a pip-installed package in home", "data dir exists: True"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the trial's log lacks %q:\n%s", want, logs)
		}
	}
}

// TestAShellRunsItsContextsStartupHookAndACommandDoesNot: as in Determined,
// notebooks, shells and TensorBoards run the hook; `det cmd` does not.
func TestAShellRunsItsContextsStartupHookAndACommandDoesNot(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	hook := contextOf(t, map[string][]byte{"startup-hook.sh": []byte("echo \"the hook ran in the $DET_TASK_TYPE\"\n")})

	var shell resolute.TaskResponse
	api(t, m, "POST", "/api/v1/shells", token, jsonBody(resolute.CreateTaskRequest{ContextTgz: hook}), &shell)
	task := waitTask(t, m, token, shell.Task.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("shell %+v; logs:\n%s", task, fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs"))
	}
	// Readiness is seen as lines arrive; they are stored in batches after.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		logs := fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs")
		if strings.Contains(logs, "shell ready") {
			if !strings.Contains(logs, "the hook ran in the SHELL") {
				t.Errorf("the shell's log lacks its hook's line:\n%s", logs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell's log lacks its ready line:\n%s", logs)
		}
	}
	api(t, m, "POST", "/api/v1/shells/"+task.ID+"/kill", token, "", nil)

	var cmd resolute.TaskResponse
	api(t, m, "POST", "/api/v1/commands", token, jsonBody(resolute.CreateTaskRequest{ContextTgz: hook,
		Entrypoint: []string{"sh", "-c", "echo the command ran; ls startup-hook.sh"}}), &cmd)
	task = waitTask(t, m, token, cmd.Task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	logs := fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs")
	if task.ExitCode == nil || *task.ExitCode != 0 || !strings.Contains(logs, "the command ran") || strings.Contains(logs, "the hook ran") {
		t.Fatalf("command %+v, want it to run without its context's hook; logs:\n%s", task, logs)
	}
}

// pureWheel is a wheel of one pure-Python module, made by hand, so pip
// installs it without a network or a build backend.
func pureWheel(t *testing.T, name, source string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	info := name + "-1.0.dist-info/"
	for _, f := range []struct{ name, body string }{
		{name + ".py", source + "\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: resolute-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", ""},
	} {
		w, err := z.Create(f.name)
		if err == nil {
			_, err = w.Write([]byte(f.body))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
