package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
)

// TestAWorkDirectoryEndedWhileTheMasterWasDownGoesWhenItStartsAgain kills
// the master while a command runs, lets the command end, and starts the
// master again: it learns how the command ended and removes its work
// directory; one that ends while it runs goes at once.
func TestAWorkDirectoryEndedWhileTheMasterWasDownGoesWhenItStartsAgain(t *testing.T) {
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	base := mastertest.TempDir(t) // task users pass through it to their work dirs
	work := filepath.Join(base, "data", "work")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", filepath.Join(base, "data"), "--resource-manager-slots", "2",
		"--db-host", dbURL.Query().Get("host"), "--db-name", dbURL.Path[1:], "--db-ssl-mode", "disable")
	m.Start()
	token := m.Login("admin")
	shared := filepath.Join(base, "shared") // where the command, as its own user, may write
	if err := os.Mkdir(shared, 0o777); err != nil || os.Chmod(shared, 0o777) != nil {
		t.Fatal(err)
	}
	ended := filepath.Join(shared, "ended")
	script := "echo made > made.txt; while [ ! -e go ]; do sleep 0.05; done; touch " + ended
	var created resolute.TaskResponse
	if code := m.Call("POST", "/api/v1/commands", token, resolute.CreateTaskRequest{Entrypoint: []string{"sh", "-c", script}}, &created); code != 200 {
		t.Fatalf("command: %d\n%s", code, m.Output())
	}
	dir := waitWorkDir(t, work)

	m.Kill()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFile(t, ended) // the command's last step: it ends with no master running
	m.Start()
	task := waitTerminated(t, m, token, created.Task.ID)
	if task.ExitCode == nil || *task.ExitCode != 0 {
		t.Errorf("the command ended %v, want 0 as it recorded", task.ExitCode)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("after the restart the work directories are %v, want none", entries)
	}

	// One that ends while the master runs goes when it ends.
	if code := m.Call("POST", "/api/v1/commands", token, resolute.CreateTaskRequest{Entrypoint: []string{"sh", "-c", "echo made > made.txt"}}, &created); code != 200 {
		t.Fatalf("command: %d", code)
	}
	waitTerminated(t, m, token, created.Task.ID)
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("after the command ended the work directories are %v, want none", entries)
	}
}

// waitWorkDir waits for the one work directory under work to hold made.txt.
func waitWorkDir(t *testing.T, work string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		entries, _ := os.ReadDir(work)
		if len(entries) == 1 {
			dir := filepath.Join(work, entries[0].Name())
			if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
				return dir
			}
		}
	}
	t.Fatal("the command's work directory did not appear")
	return ""
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

func waitTerminated(t *testing.T, m *mastertest.Master, token, id string) resolute.Task {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var tr resolute.TaskResponse
		m.Call("GET", "/api/v1/tasks/"+id, token, nil, &tr)
		if tr.Task.State == resolute.TaskTerminated {
			return tr.Task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s after a minute\n%s", id, tr.Task.State, m.Output())
		}
	}
}
