package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func waitTask(t *testing.T, m *handlerstest.Master, token, id string, done func(resolute.Task) bool) resolute.Task {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var tr resolute.TaskResponse
		api(t, m, "GET", "/api/v1/tasks/"+id, token, "", &tr)
		if done(tr.Task) || time.Now().After(deadline) {
			return tr.Task
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestACommandRunsAndItsLogsAreKept(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	var tr resolute.TaskResponse
	body := jsonBody(resolute.CreateTaskRequest{Entrypoint: []string{"sh", "-c", "echo hi from $DET_TASK_TYPE"}})
	if code := api(t, m, "POST", "/api/v1/commands", token, body, &tr); code != 200 || !strings.HasPrefix(tr.Task.ID, "command-") {
		t.Fatalf("create: %d %+v", code, tr)
	}
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if task.ExitCode == nil || *task.ExitCode != 0 {
		t.Fatalf("command ended %+v", task)
	}
	req := "/api/v1/tasks/" + task.ID + "/logs"
	logs := fetchLogs(t, m, token, req)
	if !strings.Contains(logs, "hi from COMMAND") {
		t.Fatalf("logs:\n%s", logs)
	}
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/commands", token, jsonBody(resolute.CreateTaskRequest{Config: "resources: {resource_pool: gpu}\nentrypoint: ls\n"}), &e); code != 400 ||
		!strings.Contains(e.Error.Message, `pool "gpu" does not exist`) {
		t.Fatalf("unknown pool: %d %q", code, e.Error.Message)
	}
	if code := api(t, m, "POST", "/api/v1/commands", token, jsonBody(resolute.CreateTaskRequest{Config: "description: x\n"}), &e); code != 400 ||
		!strings.Contains(e.Error.Message, "entrypoint: required for a command") {
		t.Fatalf("no entrypoint: %d %q", code, e.Error.Message)
	}
}

func TestAShellStaysUpUntilKilled(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	var tr resolute.TaskResponse
	api(t, m, "POST", "/api/v1/shells", token, jsonBody(resolute.CreateTaskRequest{}), &tr)
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.Ready })
	if task.State != resolute.TaskRunning || task.Slots != 1 {
		t.Fatalf("shell %+v", task)
	}
	var jobs resolute.JobQueueResponse
	api(t, m, "GET", "/api/v1/job-queues", token, "", &jobs)
	if len(jobs.Jobs) != 1 || jobs.Jobs[0].JobID != task.ID || jobs.Jobs[0].IsPreemptible {
		t.Fatalf("queue %+v", jobs.Jobs)
	}
	if code := api(t, m, "POST", "/api/v1/shells/"+task.ID+"/kill", token, "", nil); code != 200 {
		t.Fatalf("kill: %d", code)
	}
	task = waitTask(t, m, token, task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if task.State != resolute.TaskTerminated {
		t.Fatalf("after kill: %+v", task)
	}
}

func TestATensorBoardWithoutTheProgramFailsAtOnce(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	var tr resolute.TaskResponse
	exp := createExperiment(t, m, token, false)
	api(t, m, "POST", "/api/v1/tensorboards", token, jsonBody(resolute.CreateTaskRequest{ExperimentIDs: []int64{exp}}), &tr)
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if task.State != resolute.TaskTerminated || task.Slots != 0 {
		t.Fatalf("tensorboard %+v", task)
	}
	if logs := fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs"); !strings.Contains(logs, "tensorboard is not installed") {
		t.Fatalf("logs:\n%s", logs)
	}
}
