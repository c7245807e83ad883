package resolute

import (
	"encoding/json"
	"net"
	"strconv"
	"time"
)

// Task types, as Determined names them.
const (
	TaskCommand     = "COMMAND"
	TaskNotebook    = "NOTEBOOK"
	TaskShell       = "SHELL"
	TaskTensorBoard = "TENSORBOARD"
	// TaskCheckpointGC deletes an experiment's checkpoint files where the
	// master cannot reach them (on Kubernetes, in a pod); the master starts
	// it, nobody launches one.
	TaskCheckpointGC = "CHECKPOINT_GC"
)

// Task states.
const (
	TaskQueued      = "QUEUED"
	TaskRunning     = "RUNNING"
	TaskTerminating = "TERMINATING"
	TaskTerminated  = "TERMINATED"
)

// Task is a command, notebook, shell or TensorBoard: a job of the queue
// with one allocation, reached through the master's proxy when it serves.
type Task struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	State        string          `json:"state"`
	Description  string          `json:"description"`
	Config       json.RawMessage `json:"config"`
	UserID       int64           `json:"userId"`
	Username     string          `json:"username"`
	ProjectID    int64           `json:"projectId"`
	WorkspaceID  int64           `json:"workspaceId"`
	ResourcePool string          `json:"resourcePool"`
	Priority     *int            `json:"priority,omitempty"`
	Weight       float64         `json:"weight"`
	// QueuePosition is its place in its pool's queue, on the scale of the
	// experiments' (lower goes first among equal priorities).
	QueuePosition float64 `json:"-"`
	Slots         int     `json:"slots"`
	ServicePort   *int    `json:"-"`
	// ServiceHost is where the service listens (a pod IP); "" means the
	// master's loopback.
	ServiceHost  string     `json:"-"`
	ServiceToken string     `json:"-"`
	Ready        bool       `json:"ready"`
	ExitCode     *int       `json:"exitCode,omitempty"`
	EndReason    string     `json:"endReason,omitempty"`
	CreatedAt    time.Time  `json:"startTime"`
	EndedAt      *time.Time `json:"endTime,omitempty"`
	// ExperimentIDs and TrialIDs are what a TensorBoard shows.
	ExperimentIDs []int64 `json:"experimentIds,omitempty"`
	TrialIDs      []int64 `json:"trialIds,omitempty"`
	// ServiceAddress is where a person opens it, on the master: the
	// master's /tasks/<id>/open for notebooks and TensorBoards, which hands
	// the browser on to the task origin; /tasks/<id>/terminal for shells.
	ServiceAddress string `json:"serviceAddress,omitempty"`
	// ServiceURL is where clients that are not browsers reach a notebook or
	// TensorBoard on the task origin (<tasks_url>/proxy/<id>/); a
	// notebook's carries its token (?token=), for its owner and
	// administrators only.
	ServiceURL string `json:"serviceUrl,omitempty"`
}

// ServiceHostPort is host:port of the task's service: ServiceHost (or
// 127.0.0.1) and ServicePort, which must be set.
func (t Task) ServiceHostPort() string {
	host := t.ServiceHost
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(*t.ServicePort))
}
