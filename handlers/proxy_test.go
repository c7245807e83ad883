package handlers_test

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// proxyGet asks the task origin for path with a browser that opened the
// task as the token's user ("" for none), and returns the status and body.
func proxyGet(t *testing.T, m *handlerstest.Master, path, token string) (int, string) {
	t.Helper()
	var c *http.Client
	if token != "" {
		id, _, _ := strings.Cut(strings.TrimPrefix(path, "/proxy/"), "/")
		c = openTask(t, m, token, id)
	}
	resp, body := taskDo(t, c, m, "GET", path, "", nil)
	return resp.StatusCode, body
}

func TestANotebookIsReachedOnTheTaskOriginByItsOwnerOnly(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() != nil {
		t.Skip("Debian's jupyter-notebook is not installed (make test installs it)")
	}
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bo"},"password":"s3cret-pw"}`, nil)
	bo := login(t, m, "bo", "s3cret-pw")

	var tr resolute.TaskResponse
	api(t, m, "POST", "/api/v1/notebooks", admin, jsonBody(resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"}), &tr)
	id := tr.Task.ID
	// While it starts, the proxy says so.
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/status", admin); code != 503 && code != 200 {
		t.Fatalf("while starting: %d", code)
	}
	task := waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("the notebook never got ready: %+v\n%s", task, fetchLogs(t, m, admin, "/api/v1/tasks/"+id+"/logs"))
	}
	if task.ServiceAddress != "/tasks/"+id+"/open" || !strings.HasPrefix(task.ServiceURL, m.TasksURL+"/proxy/"+id+"/?token=") {
		t.Fatalf("service address %q, URL %q", task.ServiceAddress, task.ServiceURL)
	}
	code, body := proxyGet(t, m, "/proxy/"+id+"/api/status", admin)
	if code != 200 || !strings.Contains(body, "started") {
		t.Fatalf("Jupyter's status through the proxy: %d %s", code, body)
	}
	// Jupyter's own token, for clients that are not browsers: in the query
	// or the header.
	token := strings.TrimPrefix(task.ServiceURL, m.TasksURL+"/proxy/"+id+"/?token=")
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/kernels?token="+token, ""); code != 200 {
		t.Fatalf("Jupyter's own call with its token: %d", code)
	}
	if resp, _ := taskDo(t, nil, m, "GET", "/proxy/"+id+"/api/kernels", "", http.Header{"Authorization": {"token " + token}}); resp.StatusCode != 200 {
		t.Fatalf("Jupyter's own call with its token in the header: %d", resp.StatusCode)
	}
	var bos resolute.TaskResponse
	api(t, m, "GET", "/api/v1/notebooks/"+id, bo, "", &bos)
	if bos.Task.ServiceURL != m.TasksURL+"/proxy/"+id+"/" {
		t.Fatalf("another user is shown the notebook's token: %q", bos.Task.ServiceURL)
	}
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/tasks/"+id+"/open", bo, "", &e); code != 403 {
		t.Fatalf("another user opens it: %d %+v, want 403", code, e)
	}
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/status", ""); code != 401 {
		t.Fatalf("no task cookie: %d, want 401", code)
	}
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/kernels?token=wrong", ""); code != 401 {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	if resp, body := taskDo(t, nil, m, "GET", "/proxy/no-such-task/", "", nil); resp.StatusCode != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("unknown task: %d %s, want 404 in JSON for a client that is not a browser", resp.StatusCode, body)
	}
	browser := openTask(t, m, admin, id)
	api(t, m, "POST", "/api/v1/notebooks/"+id+"/kill", admin, "", nil)
	waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if code := api(t, m, "POST", "/api/v1/tasks/"+id+"/open", admin, "", &e); code != 410 {
		t.Fatalf("a ticket for an ended notebook: %d %+v, want 410", code, e)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := taskDo(t, browser, m, "GET", "/proxy/"+id+"/api/status", "", nil)
		if code := resp.StatusCode; code == 410 {
			if !strings.Contains(body, "TERMINATED") {
				t.Fatalf("the 410 does not say how the notebook ended: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an ended notebook answers %d, want 410", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
