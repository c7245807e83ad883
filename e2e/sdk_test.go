package e2e

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
)

// TestThePythonSDKWalksAnExperimentFromSubmissionToTheModelRegistry installs
// the SDK as a person would, from the master's /python/ with pip and no
// index, into a fresh virtual environment of Debian's Python, then runs
// e2e/testdata/sdk-walk/walk.py against a real master: the login `det user
// login` stored, create_experiment of examples/core-api-stdlib, wait,
// list_trials, iter_metrics, top_checkpoint, download (compared with the
// checkpoint's files in shared_fs and in directory storage), the model
// registry, NotFoundException, pause/activate/kill/archive, users,
// workspaces and projects, the SDK inside a
// trial (with its allocation token), and a wrong password. Then det uses
// the login the SDK stored.
func TestThePythonSDKWalksAnExperimentFromSubmissionToTheModelRegistry(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	data := filepath.Join(mastertest.TempDir(t), "data")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", data, "--resource-manager-slots", "2",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable")
	m.Start()
	det := buildDet(t)
	config := t.TempDir() // XDG_CONFIG_HOME: det's and the SDK's auth.json
	home := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + config, "HOME=" + home, "PYTHONDONTWRITEBYTECODE=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "DET_") && k != "PYTHONPATH" && k != "HOME" && k != "XDG_CONFIG_HOME" && !strings.HasPrefix(k, "VIRTUAL_ENV") {
			env = append(env, kv)
		}
	}
	run := func(dir, stdin string, extra []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, append(append([]string{}, env...), extra...), strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s\nmaster:\n%s", name, strings.Join(args, " "), err, out.String(), m.Output())
		}
		return out.String()
	}

	run(home, "\n", nil, det, "-m", m.URL, "user", "login", "admin") // the empty password of a new cluster
	admin := m.Login("admin")
	const carolPassword = "Carol-Secret-1"
	var u resolute.UserResponse
	if code := m.Call("POST", "/api/v1/users", admin, resolute.CreateUserRequest{User: resolute.UserSpec{Username: "carol"}, Password: carolPassword}, &u); code != 200 {
		t.Fatalf("create carol: %d", code)
	}

	venv := filepath.Join(t.TempDir(), "venv")
	run(home, "", nil, "/usr/bin/python3", "-m", "venv", venv)
	py := filepath.Join(venv, "bin", "python")
	pip := run(home, "", nil, py, "-m", "pip", "install", "--no-index", "--find-links", m.URL+"/python/", "determined")
	if !strings.Contains(pip, "Successfully installed determined-0.38.1+resolute") {
		t.Fatalf("pip did not install the master's wheel:\n%s", pip)
	}
	where := run(home, "", nil, py, "-c", "import determined; print(determined.__file__, determined.__version__)")
	if !strings.HasPrefix(where, venv) {
		t.Fatalf("the walk would import determined from %s, not the installed wheel", where)
	}

	example, _ := filepath.Abs("../examples/core-api-stdlib")
	walk, _ := filepath.Abs("testdata/sdk-walk/walk.py")
	work := t.TempDir()
	directory := filepath.Join(mastertest.TempDir(t), "directory") // the trial's user writes there
	if err := os.Mkdir(directory, 0o777); err != nil || os.Chmod(directory, 0o777) != nil {
		t.Fatal(err)
	}
	out := run(work, "", []string{"DIRECTORY_STORAGE=" + directory, "DET_MASTER=" + m.URL, "EXAMPLE=" + example, "STORAGE=" + filepath.Join(data, "checkpoints"),
		"WORK=" + work, "CAROL_PASSWORD=" + carolPassword}, py, "-W", "ignore::FutureWarning", walk)
	t.Logf("walk:\n%s", out)
	for _, step := range []string{"shared login from det", "create_experiment", "wait COMPLETED", "list_trials, iter_metrics",
		"top_checkpoint", "download (", "download from directory storage", "create_model, register_version", "NotFoundException", "pause, activate, kill", "users, workspaces, projects", "inside a task", "wrong password refused"} {
		if !strings.Contains(out, "ok "+step) {
			t.Errorf("the walk did not pass %q", step)
		}
	}

	// det uses the login the SDK stored for carol: no password is asked.
	if who := run(home, "", nil, det, "-m", m.URL, "-u", "carol", "user", "whoami"); !strings.Contains(who, "carol") {
		t.Errorf("det -u carol user whoami: %s", who)
	}
}
