package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func startNotebook(t *testing.T, m *handlerstest.Master, token, config string) resolute.Task {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() != nil {
		t.Skip("Debian's jupyter-notebook is not installed (make test installs it)")
	}
	var tr resolute.TaskResponse
	api(t, m, "POST", "/api/v1/notebooks", token, jsonBody(resolute.CreateTaskRequest{Config: config}), &tr)
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("the notebook never got ready: %+v", task)
	}
	return task
}

func TestAnIdleNotebookIsTerminatedWithTheReasonInItsLog(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := startNotebook(t, m, admin, "resources: {slots: 0}\nidle_timeout: 2s\n")
	start := time.Now()
	task = waitTask(t, m, admin, task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if task.State != resolute.TaskTerminated || time.Since(start) > 30*time.Second {
		t.Fatalf("not terminated: %+v", task)
	}
	if logs := fetchLogs(t, m, admin, "/api/v1/tasks/"+task.ID+"/logs"); !strings.Contains(logs, "idle for more than 2s") {
		t.Fatalf("logs lack the reason:\n%s", logs)
	}
}

// activityNotebookWithKernel starts a notebook with a 3 s idle_timeout in
// activity mode and a kernel in it through Jupyter's REST API (via the
// task origin), and returns the master, the admin's token, the task and the
// kernel's id.
func activityNotebookWithKernel(t *testing.T) (*handlerstest.Master, string, resolute.Task, string) {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := startNotebook(t, m, admin, "resources: {slots: 0}\nidle_timeout: 3s\nnotebook_idle_type: activity\n")
	var kernel struct{ ID string }
	resp, body := taskDo(t, openTask(t, m, admin, task.ID), m, "POST", "/proxy/"+task.ID+"/api/kernels", `{"name":"python3"}`,
		http.Header{"Content-Type": {"application/json"}})
	if json.Unmarshal([]byte(body), &kernel); resp.StatusCode != 201 || kernel.ID == "" {
		t.Fatalf("start a kernel: %d %s", resp.StatusCode, body)
	}
	return m, admin, task, kernel.ID
}

// TestABusyKernelKeepsAnActivityNotebookAlive runs code that sleeps in a
// kernel through Jupyter's websocket (on the task origin): in activity mode the
// busy kernel keeps the notebook up past its idle timeout.
func TestABusyKernelKeepsAnActivityNotebookAlive(t *testing.T) {
	m, admin, task, kernelID := activityNotebookWithKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := strings.Replace(m.TasksURL, "http", "ws", 1) + "/proxy/" + task.ID + "/api/kernels/" + kernelID + "/channels"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: openTask(t, m, admin, task.ID),
		HTTPHeader: http.Header{"Origin": {m.TasksURL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// Read the kernel's messages: type and parent message id.
	type kmsg struct{ typ, parent, state string }
	msgs := make(chan kmsg, 256)
	go func() {
		defer close(msgs)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				Header struct {
					MsgType string `json:"msg_type"`
				} `json:"header"`
				ParentHeader struct {
					MsgID string `json:"msg_id"`
				} `json:"parent_header"`
				Content struct {
					ExecutionState string `json:"execution_state"`
				}
			}
			if json.Unmarshal(b, &m) == nil {
				msgs <- kmsg{m.Header.MsgType, m.ParentHeader.MsgID, m.Content.ExecutionState}
			}
		}
	}()
	until := func(what string, ok func(kmsg) bool) {
		t.Helper()
		for m := range msgs {
			if ok(m) {
				return
			}
		}
		t.Fatalf("the kernel's websocket closed before %s", what)
	}
	send := func(id, typ string, content map[string]any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{
			"header":        map[string]any{"msg_id": id, "username": "test", "session": "s1", "msg_type": typ, "version": "5.3"},
			"parent_header": map[string]any{}, "metadata": map[string]any{}, "channel": "shell", "content": content,
		})
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	// As a browser does, wait until the kernel answers before running a
	// cell: Jupyter 6.4 nudges a new connection with kernel_info requests
	// on the control channel, whose "idle" status would otherwise overwrite
	// the "busy" of a cell sent at once (its execution_state is per kernel).
	send("info", "kernel_info_request", map[string]any{})
	until("kernel_info_reply", func(m kmsg) bool { return m.typ == "kernel_info_reply" && m.parent == "info" })
	time.Sleep(time.Second)
	send("m1", "execute_request", map[string]any{"code": "import time; time.sleep(12); print('slept')", "silent": false,
		"store_history": false, "user_expressions": map[string]any{}, "allow_stdin": false})
	until("the cell ran", func(m kmsg) bool { return m.typ == "status" && m.parent == "m1" && m.state == "busy" })
	go func() { // drain the rest
		for range msgs {
		}
	}()
	// Well past the 3 s timeout, the notebook still runs while the kernel works.
	time.Sleep(8 * time.Second)
	var tr resolute.TaskResponse
	api(t, m, "GET", "/api/v1/tasks/"+task.ID, admin, "", &tr)
	if tr.Task.State != resolute.TaskRunning {
		t.Fatalf("a notebook with a busy kernel was stopped: %+v\n%s", tr.Task, fetchLogs(t, m, admin, "/api/v1/tasks/"+task.ID+"/logs"))
	}
	// Once the kernel rests, the notebook goes.
	end := waitTask(t, m, admin, task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if end.State != resolute.TaskTerminated {
		t.Fatal(fmt.Sprintf("not terminated after the kernel rested: %+v", end))
	}
}

// TestAKernelNobodyConnectedToLetsAnActivityNotebookGo starts a kernel
// through Jupyter's REST API and never connects to it: Jupyter 6.4 reports
// such a kernel as "starting" for ever, which must not keep the notebook up.
func TestAKernelNobodyConnectedToLetsAnActivityNotebookGo(t *testing.T) {
	m, admin, task, _ := activityNotebookWithKernel(t)
	end := waitTask(t, m, admin, task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if end.State != resolute.TaskTerminated {
		t.Fatalf("a notebook whose only kernel nobody used was not terminated: %+v", end)
	}
	if logs := fetchLogs(t, m, admin, "/api/v1/tasks/"+task.ID+"/logs"); !strings.Contains(logs, "idle for more than 3s") {
		t.Fatalf("logs lack the reason:\n%s", logs)
	}
}

// TestAShellIsTerminatedOnlyAfterItsTerminalGoesQuiet gives a shell a 3 s
// idle_timeout: typing every second keeps it running past that; once the
// terminal is quiet it is terminated with the reason in its log.
func TestAShellIsTerminatedOnlyAfterItsTerminalGoesQuiet(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	var tr resolute.TaskResponse
	api(t, m, "POST", "/api/v1/shells", admin, jsonBody(resolute.CreateTaskRequest{Config: "idle_timeout: 3s\n"}), &tr)
	id := tr.Task.ID
	term := openTerm(t, m, admin, id)
	for i := range 6 {
		term.send(fmt.Sprintf("echo tick-%d\n", i))
		term.until(fmt.Sprintf(`tick-%d\r?\n`, i))
		time.Sleep(time.Second)
	}
	if task, _ := m.DB.Task(context.Background(), id); task.State != resolute.TaskRunning {
		t.Fatalf("a shell in use was stopped after 6 s with a 3 s idle_timeout: state %s\n%s", task.State, fetchLogs(t, m, admin, "/api/v1/tasks/"+id+"/logs"))
	}
	quiet := time.Now()
	task := waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if task.State != resolute.TaskTerminated {
		t.Fatalf("a quiet shell was not terminated: state %s", task.State)
	}
	if d := time.Since(quiet); d < 2*time.Second {
		t.Fatalf("terminated %v after the terminal went quiet, before its 3 s idle_timeout", d)
	}
	if logs := fetchLogs(t, m, admin, "/api/v1/tasks/"+id+"/logs"); !strings.Contains(logs, "idle for more than 3s") {
		t.Fatalf("logs lack the reason:\n%s", logs)
	}
}
