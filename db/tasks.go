package db

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// NewTask is what creating a task stores.
type NewTask struct {
	Type         string
	Description  string
	Config       []byte
	Context      io.Reader // read to its end as the tar.gz of the context directory; nil: none
	UserID       int64
	ProjectID    int64
	ResourcePool string
	Priority     *int
	Slots        int
	ServiceToken string
	// ExperimentIDs and TrialIDs are what a TensorBoard shows.
	ExperimentIDs []int64
	TrialIDs      []int64
}

// CreateTask stores a queued task and returns its id, <type>-<n>.
func (q *Queries) CreateTask(ctx context.Context, t NewTask) (string, error) {
	n, err := q.q.NextTaskNumber(ctx)
	if err != nil {
		return "", translate(err, "task number")
	}
	id := strings.ToLower(t.Type) + "-" + strconv.FormatInt(n, 10)
	// A nil slice would be NULL; the columns are NOT NULL.
	t.ExperimentIDs = append([]int64{}, t.ExperimentIDs...)
	t.TrialIDs = append([]int64{}, t.TrialIDs...)
	err = q.q.CreateTask(ctx, gen.CreateTaskParams{ID: id, Type: t.Type, Description: t.Description, Config: t.Config,
		UserID: t.UserID, ProjectID: t.ProjectID, ResourcePool: t.ResourcePool, Priority: int32p(t.Priority),
		Slots: int32(t.Slots), ServiceToken: t.ServiceToken, ExperimentIds: t.ExperimentIDs, TrialIds: t.TrialIDs})
	if err != nil {
		return id, translate(err, "task %s", id)
	}
	return id, q.storeTaskContext(ctx, id, t.Context)
}

// Task returns the task with id.
func (q *Queries) Task(ctx context.Context, id string) (resolute.Task, error) {
	t, err := q.q.GetTask(ctx, id)
	return toTask(t), translate(err, "task %s", id)
}

// TaskFilter selects tasks; zero fields select all.
type TaskFilter struct {
	Type   string
	Live   *bool // not terminated
	Viewer Viewer
}

// Tasks lists tasks, newest first.
func (q *Queries) Tasks(ctx context.Context, f TaskFilter) ([]resolute.Task, error) {
	var typ *string
	if f.Type != "" {
		typ = &f.Type
	}
	viewer, roles := f.Viewer.params()
	rows, err := q.q.ListTasks(ctx, gen.ListTasksParams{Type: typ, Live: f.Live, ViewerID: viewer, ViewerRoles: roles})
	if err != nil {
		return nil, translate(err, "tasks")
	}
	out := make([]resolute.Task, len(rows))
	for i, r := range rows {
		out[i] = toTask(r)
	}
	return out, nil
}

// SetTaskState sets a task's state.
func (q *Queries) SetTaskState(ctx context.Context, id, state string) error {
	return translate(q.q.SetTaskState(ctx, gen.SetTaskStateParams{ID: id, State: state}), "task %s", id)
}

// EndTask records how a task ended.
func (q *Queries) EndTask(ctx context.Context, id string, exitCode *int, reason string) error {
	return translate(q.q.EndTask(ctx, gen.EndTaskParams{ID: id, ExitCode: int32p(exitCode), EndReason: reason}), "task %s", id)
}

// SetTaskService records the port a task's service listens on.
func (q *Queries) SetTaskService(ctx context.Context, id string, port int) error {
	p := int32(port)
	return translate(q.q.SetTaskService(ctx, gen.SetTaskServiceParams{ID: id, ServicePort: &p}), "task %s", id)
}

// SetTaskServiceHost records the host a task's service listens on (a pod
// IP); without one it is the master's loopback.
func (q *Queries) SetTaskServiceHost(ctx context.Context, id, host string) error {
	return translate(q.q.SetTaskServiceHost(ctx, gen.SetTaskServiceHostParams{ID: id, ServiceHost: &host}), "task %s", id)
}

// SetTaskReady marks a task's service ready.
func (q *Queries) SetTaskReady(ctx context.Context, id string) error {
	return translate(q.q.SetTaskReady(ctx, id), "task %s", id)
}

// SetTaskPriority changes a task's priority.
func (q *Queries) SetTaskPriority(ctx context.Context, id string, priority int) error {
	p := int32(priority)
	return translate(q.q.SetTaskPriority(ctx, gen.SetTaskPriorityParams{ID: id, Priority: &p}), "task %s", id)
}

func toTask(t gen.TaskView) resolute.Task {
	return resolute.Task{ID: t.ID, Type: t.Type, State: t.State, Description: t.Description, Config: json.RawMessage(t.Config),
		UserID: t.UserID, Username: t.Username, ProjectID: t.ProjectID, ResourcePool: t.ResourcePool, Priority: intp(t.Priority),
		Weight: t.Weight, QueuePosition: t.QueuePosition, Slots: int(t.Slots), ServicePort: intp(t.ServicePort), ServiceHost: deref(t.ServiceHost), ServiceToken: t.ServiceToken, Ready: t.Ready,
		ExitCode: intp(t.ExitCode), EndReason: t.EndReason, CreatedAt: t.CreatedAt, EndedAt: t.EndedAt,
		ExperimentIDs: t.ExperimentIds, TrialIDs: t.TrialIds, WorkspaceID: t.WorkspaceID}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AddCheckpointGC records the checkpoints a CHECKPOINT_GC task deletes.
func (q *Queries) AddCheckpointGC(ctx context.Context, taskID string, uuids []string) error {
	return translate(q.q.AddCheckpointGC(ctx, gen.AddCheckpointGCParams{TaskID: taskID, Uuids: uuids}), "checkpoint GC of task %s", taskID)
}

// CheckpointsBeingCollected returns which of uuids a CHECKPOINT_GC task
// that has not ended holds.
func (q *Queries) CheckpointsBeingCollected(ctx context.Context, uuids []string) (map[string]bool, error) {
	rows, err := q.q.CheckpointsBeingCollected(ctx, uuids)
	out := make(map[string]bool, len(rows))
	for _, u := range rows {
		out[u] = true
	}
	return out, translate(err, "checkpoints being collected")
}

// TaskCheckpointGC returns the checkpoints a CHECKPOINT_GC task deletes.
func (q *Queries) TaskCheckpointGC(ctx context.Context, taskID string) ([]string, error) {
	uuids, err := q.q.TaskCheckpointGC(ctx, taskID)
	return uuids, translate(err, "checkpoint GC of task %s", taskID)
}
