package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// tasks runs a `det ... list --json` and returns the tasks.
func (c *cli) tasks(args ...string) []resolute.Task {
	c.t.Helper()
	var list []resolute.Task
	out := c.ok("", append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		c.t.Fatalf("%v --json: %v\n%s", args, err, out)
	}
	return list
}

// describe runs `det NOUN describe ID --json`.
func (c *cli) describe(noun, id string) resolute.Task {
	c.t.Helper()
	var task resolute.Task
	out := c.ok("", noun, "describe", id, "--json")
	if err := json.Unmarshal([]byte(out), &task); err != nil {
		c.t.Fatalf("describe %s: %v\n%s", id, err, out)
	}
	return task
}

// ended waits until a task has ended.
func (c *cli) ended(noun, id string) resolute.Task {
	c.t.Helper()
	return c.waitFor(noun, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
}

// started waits until a task's process runs (or it has ended already).
func (c *cli) started(noun, id string) resolute.Task {
	c.t.Helper()
	return c.waitFor(noun, id, func(t resolute.Task) bool {
		return t.State == resolute.TaskRunning || t.State == resolute.TaskTerminated
	})
}

func (c *cli) waitFor(noun, id string, done func(resolute.Task) bool) resolute.Task {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		task := c.describe(noun, id)
		if done(task) {
			return task
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s is still %s", id, task.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func taskIDs(list []resolute.Task) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.ID)
	}
	return out
}

var taskIDRE = regexp.MustCompile(`^(command|notebook|tensorboard)-\d+\n$`)

func TestCommandRunFollowsTheCommandAndExitsWithItsStatus(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()

	r := c.run("", "cmd", "run", "echo", "hi")
	if r.code != 0 || r.stdout != "hi\n" || !strings.Contains(r.stderr, "Launched command command-") {
		t.Fatalf("det cmd run echo hi: exit %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	echo := regexp.MustCompile(`command-\d+`).FindString(r.stderr)

	r = c.run("", "command", "run", "sh", "-c", "echo out; exit 3")
	if r.code != 3 || r.stdout != "out\n" || !regexp.MustCompile(`Command command-\d+ exited with status 3\n`).MatchString(r.stderr) {
		t.Fatalf("exit 3: exit %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// One argument that needs a shell gets one.
	if out := c.ok("", "cmd", "run", "echo $DET_TASK_TYPE; echo two"); out != "COMMAND\ntwo\n" {
		t.Fatalf("shell line: %q", out)
	}

	// The context directory is the command's working directory, less what
	// .detignore lists; --config sets its description.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the context\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("no"), 0o644)
	os.WriteFile(filepath.Join(dir, ".detignore"), []byte("secret.txt\n"), 0o644)
	cfg := writeConfig(t, "description: from the file\nenvironment: {environment_variables: [GREETING=hey]}\n")
	r = c.run("", "cmd", "run", "--config-file", cfg, "-c", dir, "sh", "-c", "cat hello.txt; ls; echo $GREETING")
	if r.code != 0 || !strings.Contains(r.stdout, "hello from the context\n") || strings.Contains(r.stdout, "secret.txt") || !strings.Contains(r.stdout, "hey\n") {
		t.Fatalf("with a context: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// Detached, it prints the id; list, describe, set priority and kill.
	id := c.ok("", "cmd", "run", "-d", "--config", "description=sleeper", "sleep", "60")
	if !taskIDRE.MatchString(id) {
		t.Fatalf("-d printed %q", id)
	}
	id = strings.TrimSpace(id)
	if got := taskIDs(c.tasks("cmd", "list")); !slices.Equal(got, []string{id}) {
		t.Fatalf("live commands: %v, want %s", got, id)
	}
	if got := c.tasks("cmd", "ls", "--all"); len(got) != 5 || got[0].ID != id || got[0].Description != "sleeper" || got[0].Username != "admin" {
		t.Fatalf("every command: %+v", got)
	}
	out := c.ok("", "cmd", "list")
	for _, w := range []string{"ID", "Owner", "Description", "State", "Resource Pool", id, "admin", "sleeper"} {
		if !strings.Contains(out, w) {
			t.Errorf("det cmd list lacks %q:\n%s", w, out)
		}
	}
	if out := c.ok("", "cmd", "set", "priority", id, "7"); out != "Set priority of command "+id+" to 7\n" {
		t.Fatalf("set priority: %q", out)
	}
	if task := c.describe("cmd", id); task.Priority == nil || *task.Priority != 7 || task.Slots != 1 {
		t.Fatalf("after set priority: %+v", task)
	}
	if out := c.ok("", "cmd", "describe", id); !strings.Contains(out, "Priority:") || !strings.Contains(out, "sleep") {
		t.Fatalf("describe:\n%s", out)
	}
	if got := taskIDs(c.tasks("task", "list")); !slices.Equal(got, []string{id}) {
		t.Fatalf("det task list: %v", got)
	}
	c.started("cmd", id)
	if out := c.ok("", "cmd", "kill", id); out != "Killed command "+id+"\n" {
		t.Fatalf("kill: %q", out)
	}
	if task := c.ended("cmd", id); task.EndReason == "" {
		t.Fatalf("killed: %+v", task)
	}
	if r := c.run("", "cmd", "kill", id); r.code != 1 || !strings.Contains(r.stderr, "has ended") {
		t.Fatalf("kill twice: %d %s", r.code, r.stderr)
	}

	// Logs, formatted, and the kind is checked.
	if out := c.ok("", "cmd", "logs", echo); !strings.Contains(out, "|| hi\n") {
		t.Fatalf("det cmd logs %s:\n%s", echo, out)
	}
	if out := c.ok("", "task", "logs", "-f", echo); !strings.Contains(out, "|| hi\n") {
		t.Fatalf("det task logs -f %s:\n%s", echo, out)
	}
	if r := c.run("", "notebook", "logs", echo); r.code != 1 || !strings.Contains(r.stderr, "Error: notebook "+echo+" not found") {
		t.Fatalf("a command as a notebook: %d %s", r.code, r.stderr)
	}
	if r := c.run("", "cmd", "run"); r.code != 2 {
		t.Fatalf("no entrypoint: %d %s", r.code, r.stderr)
	}
}

func TestShellsAndTensorBoardsFromTheCLI(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()

	// A TensorBoard is over experiments (and trials), which must exist.
	cfg := writeConfig(t, "name: sleeper\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n")
	e1 := createdID(t, c.ok("", "experiment", "create", cfg, "--paused"))
	e2 := createdID(t, c.ok("", "experiment", "create", cfg, "--paused"))
	id := strings.TrimSpace(c.ok("", "tensorboard", "start", e1, e2, "-d"))
	task := c.describe("tensorboard", id)
	if task.Description != "TensorBoard (experiments "+e1+", "+e2+")" || task.Slots != 0 ||
		fmt.Sprint(task.ExperimentIDs) != "["+e1+" "+e2+"]" {
		t.Fatalf("tensorboard %+v", task)
	}
	if r := c.run("", "tensorboard", "start", e1, "-t", "999", "-d"); r.code != 1 || !strings.Contains(r.stderr, "trial 999 not found") {
		t.Fatalf("an unknown trial: %d %s", r.code, r.stderr)
	}
	// Without the program it ends before it serves, and det says so.
	r := c.run("", "tensorboard", "start", e1)
	if r.code != 1 || !strings.Contains(r.stderr, "ended before it was ready") || !strings.Contains(r.stderr, "det tensorboard logs tensorboard-") {
		t.Fatalf("tensorboard start: %d\n%s", r.code, r.stderr)
	}
	if r := c.run("", "tensorboard", "start"); r.code != 2 || !strings.Contains(r.stderr, "at least one experiment") {
		t.Fatalf("no ids: %d %s", r.code, r.stderr)
	}

	// Shells start elsewhere; det lists, describes and kills them.
	resp, err := client.New(c.m.URL).Login(context.Background(), "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	shell, err := client.New(c.m.URL, client.WithToken(resp.Token)).CreateTask(context.Background(), resolute.TaskShell, resolute.CreateTaskRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := taskIDs(c.tasks("shell", "list")); !slices.Equal(got, []string{shell.ID}) {
		t.Fatalf("shells: %v", got)
	}
	if out := c.ok("", "shell", "describe", shell.ID); !strings.Contains(out, c.m.URL+"/tasks/"+shell.ID+"/terminal") {
		t.Fatalf("shell describe:\n%s", out)
	}
	c.ok("", "shell", "set", "priority", shell.ID, "3")
	c.started("shell", shell.ID)
	c.ok("", "shell", "kill", shell.ID)
	c.ended("shell", shell.ID)
	if got := c.tasks("task", "list", "--all"); len(got) != 3 {
		t.Fatalf("every task: %v", taskIDs(got))
	}
}

func TestNotebookStartWaitsUntilItServes(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := strings.TrimSpace(c.ok("", "notebook", "start", "-d", "--config", "resources.slots=0"))
	if task := c.describe("notebook", id); task.Type != resolute.TaskNotebook || task.Slots != 0 || task.Username != "admin" {
		t.Fatalf("notebook %+v", task)
	}
	// Without Jupyter it may have ended already.
	if c.started("notebook", id).State == resolute.TaskRunning {
		c.ok("", "notebook", "kill", id)
	}
	c.ended("notebook", id)

	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() != nil {
		t.Skip("Jupyter is not installed: python3-notebook")
	}
	var opened []string
	openBrowser = func(u string) error { opened = append(opened, u); return nil }
	t.Cleanup(func() { openBrowser = func(u string) error { return exec.Command("xdg-open", u).Start() } })
	c.env["DISPLAY"] = ":0"
	r := c.run("", "notebook", "start", "--config", "resources.slots=0")
	link := regexp.MustCompile(`^` + regexp.QuoteMeta(c.m.TasksURL) + `/redeem\?ticket=[A-Za-z0-9_%-]+\n$`)
	m := regexp.MustCompile(`Notebook (notebook-\d+) is ready at`).FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil || !link.MatchString(r.stdout) {
		t.Fatalf("notebook start: exit %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if task := c.describe("notebook", m[1]); !task.Ready || task.State != resolute.TaskRunning {
		t.Fatalf("not ready: %+v", task)
	}
	if !slices.Equal(opened, []string{strings.TrimSpace(r.stdout)}) {
		t.Fatalf("opened %v", opened)
	}
	// The link opens Jupyter in a browser once; det notebook open makes
	// another.
	jupyter := func(link string) int {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Get(link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && !strings.Contains(string(body), "Jupyter") {
			t.Fatalf("the link leads to %s:\n%.300s", resp.Request.URL, body)
		}
		return resp.StatusCode
	}
	if code := jupyter(strings.TrimSpace(r.stdout)); code != 200 {
		t.Fatalf("the link of notebook start: %d", code)
	}
	if code := jupyter(strings.TrimSpace(r.stdout)); code != 401 {
		t.Fatalf("the same link again: %d, want 401", code)
	}
	out := c.ok("", "notebook", "open", m[1], "--no-browser")
	if !link.MatchString(out) || out == r.stdout || len(opened) != 1 {
		t.Fatalf("open: %q (opened %v)", out, opened)
	}
	if code := jupyter(strings.TrimSpace(out)); code != 200 {
		t.Fatalf("the link of notebook open: %d", code)
	}
	c.ok("", "notebook", "kill", m[1])
	c.ended("notebook", m[1])
	if r := c.run("", "notebook", "open", m[1]); r.code != 1 || !strings.Contains(r.stderr, "has ended") {
		t.Fatalf("open an ended one: %d %s", r.code, r.stderr)
	}
}
