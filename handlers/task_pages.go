package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// The Tasks pages: every command, notebook, shell and TensorBoard, with
// buttons that launch notebooks and a form that runs a command.

func taskPagePath(id string) string { return "/tasks/" + id }

// handleTaskListPage serves GET /tasks[?type=&state=&ended=1].
func (s *Server) handleTaskListPage(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskTable(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.TaskListPage(views.TaskList{Shell: s.shell(r, "Tasks", "tasks"), Table: t}))
}

// handleTaskTable serves GET /tasks/table: the htmx fragment of the list,
// fetched again with the page's filter on each pushed change (GET /events).
func (s *Server) handleTaskTable(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskTable(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TaskTableView(t))
}

// taskTable reads the filter and loads the tasks: the live ones, or every
// one with ended=1 or when the filter asks for ended tasks.
func (s *Server) taskTable(r *http.Request) (views.TaskTable, error) {
	q := r.URL.Query()
	t := views.TaskTable{Type: strings.ToUpper(q.Get("type")), State: strings.ToUpper(q.Get("state"))}
	t.Ended = q.Get("ended") != "" && q.Get("ended") != "0" && q.Get("ended") != "false"
	if t.Type != "" && !slices.ContainsFunc(views.TaskTypes, func(ty [2]string) bool { return ty[0] == t.Type }) {
		return t, resolute.Errorf(resolute.EInvalid, "type: unknown task type %q; use command, notebook, shell or tensorboard", q.Get("type"))
	}
	if t.State != "" && !slices.Contains(views.TaskStates, t.State) {
		return t, resolute.Errorf(resolute.EInvalid, "state: unknown state %q", q.Get("state"))
	}
	f := db.TaskFilter{Type: t.Type, Viewer: viewer(r, authz.ViewNSC)}
	if !t.Ended && t.State != resolute.TaskTerminated {
		f.Live = new(true)
	}
	list, err := s.db.Tasks(r.Context(), f)
	if err != nil {
		return t, err
	}
	for _, task := range list {
		if t.State == "" || task.State == t.State {
			t.Rows = append(t.Rows, s.taskRow(r, task))
		}
	}
	return t, nil
}

// taskRow is a task with where to open it and whether the viewer may kill
// it: only its owner and administrators may open or kill it.
func (s *Server) taskRow(r *http.Request, t resolute.Task) views.TaskRow {
	t = s.withAddress(r, t)
	mine := authz.Can(actorFrom(r), authz.ChangeTask, authz.Task(t)) == nil
	opens := authz.Can(actorFrom(r), authz.OpenTask, authz.Task(t)) == nil
	row := views.TaskRow{Task: t, CanKill: t.State != resolute.TaskTerminated && mine}
	if t.Ready && t.State == resolute.TaskRunning && t.Type != resolute.TaskCommand && opens {
		row.Open = t.ServiceAddress
	}
	row.Ports = s.taskPorts(r, t)
	return row
}

// handleTaskPage serves GET /tasks/{id}: the task, its config and logs.
func (s *Server) handleTaskPage(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskParam(r, "")
	p := views.TaskPage{Shell: s.shell(r, t.ID, "tasks"), Live: s.taskRow(r, t)}
	if err == nil {
		p.Config, err = jsonToYAML(resolute.MaskConfig(t.Config))
	}
	if err == nil {
		p.Logs, err = s.taskLogs(r, t, 0)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.TaskView(p))
}

// handleTaskLive serves GET /tasks/{id}/live: the htmx fragment of the
// task's header, fetched again on each pushed change until it ends.
func (s *Server) handleTaskLive(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskParam(r, "")
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TaskLiveView(s.taskRow(r, t)))
}

// handleTaskLogLines serves GET /tasks/{id}/logs/lines?after=N: the htmx
// fragment of the lines after N.
func (s *Server) handleTaskLogLines(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskParam(r, "")
	if err != nil {
		s.error(w, r, err)
		return
	}
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || after < 0 {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "after: expected an integer"))
		return
	}
	l, err := s.taskLogs(r, t, after)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TaskLogLines(l))
}

// taskLogs loads a task's log lines after a line id. The log is done when
// the task ended a while ago and no lines are left.
func (s *Server) taskLogs(r *http.Request, t resolute.Task, after int64) (views.TaskLogs, error) {
	l := views.TaskLogs{TaskID: t.ID, After: after}
	const limit = 1000
	lines, err := s.db.TaskLogs(r.Context(), t.ID, db.LogFilter{After: after, Limit: limit})
	if err != nil {
		return l, err
	}
	for _, line := range lines {
		l.Lines = append(l.Lines, logLineView(line))
		l.After = line.ID
	}
	settled := t.EndedAt != nil && s.now().Sub(*t.EndedAt) > logSettle
	l.Done = t.State == resolute.TaskTerminated && settled && len(lines) < limit
	return l, nil
}

// handleTaskKillForm serves POST /tasks/{id}/kill (next: the page to go
// back to, under /tasks).
func (s *Server) handleTaskKillForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	next := r.PostFormValue("next")
	if next != "/tasks" && !strings.HasPrefix(next, "/tasks?") && !strings.HasPrefix(next, "/tasks/") {
		next = "/tasks"
	}
	t, err := s.taskParam(r, "")
	if err == nil {
		err = s.svc.Tasks.Kill(r.Context(), actorFrom(r), t.ID)
	}
	s.taskFormDone(w, r, err, next, "Killing "+chi.URLParam(r, "id")+".")
}

// handleTaskLaunchNotebookForm serves POST /tasks/launch-notebook (slots:
// 1, or 0 for a CPU-only notebook in the pool of zero-slot work).
func (s *Server) handleTaskLaunchNotebookForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	slots := r.PostFormValue("slots")
	if slots != "0" && slots != "1" {
		s.taskFormDone(w, r, resolute.Errorf(resolute.EInvalid, "slots: must be 0 or 1, got %q", slots), "/tasks", "")
		return
	}
	s.launchTaskForm(w, r, control.TaskRequest{Type: resolute.TaskNotebook, Overrides: []string{"resources.slots=" + slots}},
		"/tasks", taskLaunched)
}

// handleTaskLaunchShellForm serves POST /tasks/launch-shell: a shell as
// `det shell start` starts one (the task config's defaults), then its task
// page, whose Open button opens its terminal once it runs.
func (s *Server) handleTaskLaunchShellForm(w http.ResponseWriter, r *http.Request) {
	s.launchTaskForm(w, r, control.TaskRequest{Type: resolute.TaskShell}, "/tasks", taskLaunched)
}

// handleTaskRunCommandForm serves POST /tasks/run-command (entrypoint: a
// shell command line, run with sh -c).
func (s *Server) handleTaskRunCommandForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	line := strings.TrimSpace(r.PostFormValue("entrypoint"))
	if line == "" {
		s.taskFormDone(w, r, resolute.Errorf(resolute.EInvalid, "Type a command to run."), "/tasks", "")
		return
	}
	s.launchTaskForm(w, r, control.TaskRequest{Type: resolute.TaskCommand, Entrypoint: []string{"sh", "-c", line}}, "/tasks", ".")
}

// handleExperimentTensorBoardForm serves POST /experiments/{id}/tensorboard:
// a TensorBoard over the experiment's trials, in its project, then the
// TensorBoard's task page; a refusal goes back to the experiment's page.
func (s *Server) handleExperimentTensorBoardForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.launchTaskForm(w, r, control.TaskRequest{Type: resolute.TaskTensorBoard, ExperimentIDs: []int64{e.ID}, ProjectID: e.ProjectID},
		experimentPath(e.ID), tensorBoardLaunched)
}

// tensorBoardLaunched and taskLaunched end the message after a task's
// launch. They say nothing of when it opens: the flash is read on the next
// page, by when the task may already run or have ended; the task page's
// status line (views.TaskStatus) says what it is doing then.
const (
	tensorBoardLaunched = taskLaunched
	taskLaunched        = "."
)

// launchTaskForm creates a task for the signed-in user and goes to its page,
// or back to the form's page with the reason the master refused.
func (s *Server) launchTaskForm(w http.ResponseWriter, r *http.Request, req control.TaskRequest, back, more string) {
	t, err := s.svc.Tasks.Create(r.Context(), actorFrom(r), req)
	if err != nil {
		s.taskFormDone(w, r, err, back, "")
		return
	}
	redirect(w, r, taskPagePath(t.ID), "ok", "Launched "+t.ID+more)
}

// taskFormDone answers a Tasks form: on to target with message, or back
// there with the reason the master refused.
func (s *Server) taskFormDone(w http.ResponseWriter, r *http.Request, err error, target, message string) {
	switch resolute.ErrorCode(err) {
	case "":
		redirect(w, r, target, "ok", message)
	case resolute.EInvalid, resolute.ENotFound, resolute.EConflict, resolute.ETooLarge:
		redirect(w, r, target, "error", sentence(resolute.ErrorMessage(err)))
	default:
		s.error(w, r, err)
	}
}
