package handlers_test

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func proxyGet(t *testing.T, m *handlerstest.Master, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestANotebookIsReachedThroughTheProxyByItsOwnerOnly(t *testing.T) {
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
	if !strings.HasPrefix(task.ServiceAddress, "/proxy/"+id+"/?token=") {
		t.Fatalf("service address %q", task.ServiceAddress)
	}
	code, body := proxyGet(t, m, "/proxy/"+id+"/api/status", admin)
	if code != 200 || !strings.Contains(body, "started") {
		t.Fatalf("Jupyter's status through the proxy: %d %s", code, body)
	}
	token := strings.TrimPrefix(task.ServiceAddress, "/proxy/"+id+"/?token=")
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/kernels?token="+token, ""); code != 200 {
		t.Fatalf("Jupyter's own call with its token: %d", code)
	}
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/status", bo); code != 403 {
		t.Fatalf("another user: %d, want 403", code)
	}
	if code, _ := proxyGet(t, m, "/proxy/"+id+"/api/status", ""); code != 401 {
		t.Fatalf("no session: %d, want 401", code)
	}
	if code, body := proxyGet(t, m, "/proxy/no-such-task/", admin); code != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("unknown task: %d %s, want 404 in JSON for a client that is not a browser", code, body)
	}
	api(t, m, "POST", "/api/v1/notebooks/"+id+"/kill", admin, "", nil)
	waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := proxyGet(t, m, "/proxy/"+id+"/api/status", admin)
		if code == 410 {
			if !strings.Contains(body, "TERMINATED") {
				t.Fatalf("the 410 does not say how the notebook ended: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an ended notebook answers %d, want 410", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
