package handlers_test

import (
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// launched reads the task id from the redirect to a new task's page.
func launched(t *testing.T, resp *http.Response, body string) string {
	t.Helper()
	m := regexp.MustCompile(`^/tasks/((command|notebook|shell)-\d+)$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != 303 || m == nil {
		t.Fatalf("launch: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	return m[1]
}

// flashOn reads the flash message a page shows.
func flashOn(t *testing.T, c *http.Client, m *handlerstest.Master, path string) string {
	t.Helper()
	_, body := get(t, c, m, path)
	f := regexp.MustCompile(`<div class="flash ([a-z]+)" id="flash" role="status"><span>([^<]*)</span>`).FindStringSubmatch(body)
	if f == nil {
		t.Fatalf("no flash message on %s", path)
	}
	return f[1] + ": " + f[2]
}

func TestTheTasksPageLaunchesListsFiltersAndKills(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	c := signInPages(t, m, "admin", "")

	resp, body := get(t, c, m, "/tasks")
	if resp.StatusCode != 200 {
		t.Fatalf("/tasks: %d", resp.StatusCode)
	}
	wants(t, "the empty Tasks page", body, `id="launch-notebook"`, `id="launch-cpu-notebook"`, `id="run-command"`,
		`id="task-table"`, `hx-get="/tasks/table?"`, `hx-trigger="live:tasks from:body,`, "No live tasks.")
	if _, body := get(t, c, m, "/dashboard"); !strings.Contains(body, `id="launch-cpu-notebook"`) {
		t.Error("the dashboard has no notebook buttons")
	}

	// A CPU-only notebook: slots 0, and its page.
	resp, body = post(t, c, m, "/tasks/launch-notebook", url.Values{"slots": {"0"}})
	nb := launched(t, resp, body)
	if f := flashOn(t, c, m, "/tasks/"+nb); f != "ok: Launched "+nb+"." {
		t.Fatalf("flash %q", f)
	}
	task := waitTask(t, m, admin, nb, func(t resolute.Task) bool { return t.State != resolute.TaskQueued })
	if task.Slots != 0 || task.Type != resolute.TaskNotebook {
		t.Fatalf("notebook %+v", task)
	}
	resp, body = post(t, c, m, "/tasks/launch-notebook", url.Values{"slots": {"1"}})
	nb1 := launched(t, resp, body)
	if task := waitTask(t, m, admin, nb1, func(resolute.Task) bool { return true }); task.Slots != 1 {
		t.Fatalf("notebook %+v", task)
	}
	if resp, _ := post(t, c, m, "/tasks/launch-notebook", url.Values{"slots": {"4"}}); resp.StatusCode != 303 || resp.Header.Get("Location") != "/tasks" {
		t.Fatalf("slots 4: %d", resp.StatusCode)
	}
	if f := flashOn(t, c, m, "/tasks"); !strings.Contains(f, `error: Slots must be 0 or 1, got &#34;4&#34;.`) {
		t.Fatalf("flash %q", f)
	}

	// A command from the form runs with sh -c; its page shows the config and logs.
	resp, body = post(t, c, m, "/tasks/run-command", url.Values{"entrypoint": {"echo hello-$DET_TASK_TYPE"}})
	cmd := launched(t, resp, body)
	waitTask(t, m, admin, cmd, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	resp, body = get(t, c, m, "/tasks/"+cmd)
	if resp.StatusCode != 200 {
		t.Fatalf("/tasks/%s: %d", cmd, resp.StatusCode)
	}
	wants(t, "the command's page", body, `id="task-live"`, "TERMINATED", `id="task-config"`, "- sh", "hello-COMMAND",
		`id="task-log-poll"`, "Command: sh -c echo hello-$DET_TASK_TYPE")
	if strings.Contains(body, `id="kill-task"`) || strings.Contains(body, `hx-get="/tasks/`+cmd+`/live"`) {
		t.Error("an ended command offers Kill or is still followed")
	}
	if _, body := get(t, c, m, "/tasks/"+cmd+"/logs/lines?after=0"); !strings.Contains(body, "hello-COMMAND") || !strings.Contains(body, `beforeend:#task-log-lines`) {
		t.Errorf("log lines fragment:\n%s", body)
	}
	if _, body := get(t, c, m, "/tasks/"+cmd+"/live"); !strings.HasPrefix(body, `<section class="panel" id="task-live"`) {
		t.Errorf("live fragment:\n%s", body)
	}
	if resp, _ := post(t, c, m, "/tasks/run-command", url.Values{"entrypoint": {"  "}}); resp.StatusCode != 303 || flashOn(t, c, m, "/tasks") != "error: Type a command to run." {
		t.Fatalf("empty command: %d", resp.StatusCode)
	}

	// Filters: live by default; ended ones on request; by type and state.
	_, body = get(t, c, m, "/tasks/table")
	wants(t, "the live table", body, `id="task-`+nb+`"`, `id="task-`+nb1+`"`, `id="kill-`+nb+`"`)
	if strings.Contains(body, `id="task-`+cmd+`"`) {
		t.Error("the live table shows an ended command")
	}
	_, body = get(t, c, m, "/tasks?ended=1")
	wants(t, "every task", body, `id="task-`+cmd+`"`, `id="task-`+nb+`"`, `name="ended" value="1" checked`)
	_, body = get(t, c, m, "/tasks?type=command&ended=1")
	if !strings.Contains(body, `id="task-`+cmd+`"`) || strings.Contains(body, `id="task-`+nb+`"`) {
		t.Error("type=command shows notebooks or not the command")
	}
	_, body = get(t, c, m, "/tasks/table?state=TERMINATED")
	if !strings.Contains(body, `id="task-`+cmd+`"`) || strings.Contains(body, `id="task-`+nb+`"`) || !strings.Contains(body, `hx-get="/tasks/table?state=TERMINATED"`) {
		t.Error("state=TERMINATED is not only the ended command")
	}
	if resp, _ := get(t, c, m, "/tasks?type=experiment"); resp.StatusCode != 400 {
		t.Errorf("unknown type: %d", resp.StatusCode)
	}

	// Once Jupyter serves, its owner may open it.
	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() == nil {
		waitTask(t, m, admin, nb, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
		if _, body := get(t, c, m, "/tasks/table"); !strings.Contains(body, `href="/tasks/`+nb+`/open" target="_blank" rel="noopener" id="open-`+nb+`"`) ||
			strings.Contains(body, "token=") {
			t.Errorf("no Open link for a ready notebook, or one with its token:\n%s", body)
		}
	}

	// bob sees admin's tasks but may not kill nor open them.
	bob := signInPages(t, m, "bob", "s3cret-pw")
	if _, body := get(t, bob, m, "/tasks"); !strings.Contains(body, `id="task-`+nb+`"`) || strings.Contains(body, `id="kill-`+nb+`"`) ||
		strings.Contains(body, `id="open-`+nb+`"`) || strings.Contains(body, "token=") {
		t.Error("bob does not see admin's notebook, or may kill it, or is given its token")
	}
	if resp, body := post(t, bob, m, "/tasks/"+nb+"/kill", url.Values{"next": {"/tasks"}}); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, "belongs to admin") {
		t.Fatalf("bob kills: %d", resp.StatusCode)
	}

	// Kill from the task's page goes back there; from elsewhere, to /tasks.
	resp, _ = post(t, c, m, "/tasks/"+nb+"/kill", url.Values{"next": {"/tasks/" + nb}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/tasks/"+nb {
		t.Fatalf("kill: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if f := flashOn(t, c, m, "/tasks/"+nb); f != "ok: Killing "+nb+"." {
		t.Fatalf("flash %q", f)
	}
	waitTask(t, m, admin, nb, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	resp, _ = post(t, c, m, "/tasks/"+nb1+"/kill", url.Values{"next": {"https://example.com/"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/tasks" {
		t.Fatalf("kill with a foreign next: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := post(t, c, m, "/tasks/"+nb+"/kill", nil); resp.StatusCode != 303 || !strings.Contains(flashOn(t, c, m, "/tasks"), "has ended") {
		t.Fatalf("kill an ended one: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, m, "/tasks/notebook-999"); resp.StatusCode != 404 {
		t.Fatalf("unknown task: %d", resp.StatusCode)
	}
}
