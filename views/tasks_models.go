package views

import (
	"strings"

	"github.com/resolute-ml/resolute"
)

// TaskTypes are the task types the Tasks page filters by, with the words
// the filter shows.
var TaskTypes = [][2]string{
	{resolute.TaskCommand, "Commands"}, {resolute.TaskNotebook, "Notebooks"},
	{resolute.TaskShell, "Shells"}, {resolute.TaskTensorBoard, "TensorBoards"},
	{resolute.TaskCheckpointGC, "Checkpoint GC"},
}

// TaskStates are the states the Tasks page filters by, in the order a task
// goes through them.
var TaskStates = []string{resolute.TaskQueued, resolute.TaskRunning, resolute.TaskTerminating, resolute.TaskTerminated}

// TaskList is the Tasks page (GET /tasks): launch buttons, the run-command
// form, a filter and the live table.
type TaskList struct {
	Shell Shell
	Table TaskTable
}

// TaskTable is the table of tasks under the page's filter; htmx refreshes
// it from GET /tasks/table on each pushed change.
type TaskTable struct {
	Type  string // "" for every type
	State string // "" for every state
	Ended bool   // show the tasks that ended too
	Rows  []TaskRow
}

// TaskRow is one task with what the viewer may do with it.
type TaskRow struct {
	Task    resolute.Task
	Open    string // where to open it; "" while it cannot be opened
	CanKill bool   // the viewer owns it or is an administrator, and it has not ended
	// Ports are the task's HTTP proxy ports, for its owner while it runs.
	Ports []TaskPort
}

// TaskPort is one of a task's HTTP proxy ports (environment.proxy_ports
// with proxy_tcp: false) and where its owner opens it.
type TaskPort struct {
	Port int
	Open string
}

// TaskPage is one task (GET /tasks/{id}): its live header, its expanded
// config and its logs.
type TaskPage struct {
	Shell  Shell
	Live   TaskRow
	Config string // YAML
	Logs   TaskLogs
}

// TaskLogs is a task's log, followed while it runs.
type TaskLogs struct {
	TaskID string
	Lines  []LogLine
	After  int64 // the last line's id, where following continues
	Done   bool  // the task ended and every line is shown: stop following
}

// TaskStatus is the task page's line on what a task that opens in the
// browser is doing now (it replaces the launch's flash, which could only
// guess): waiting to be ready, ready to open, or ended. "" for tasks that
// do not open (commands).
func TaskStatus(r TaskRow) string {
	what := map[string]string{resolute.TaskNotebook: "Jupyter", resolute.TaskTensorBoard: "TensorBoard", resolute.TaskShell: "the shell"}[r.Task.Type]
	switch {
	case what == "":
		return ""
	case r.Task.State == resolute.TaskTerminated:
		return capital(what) + " has ended; its log below says why."
	case r.Open != "":
		return capital(what) + " is ready: Open it."
	}
	return "It opens once " + what + " is ready."
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
