package authz

import (
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// The objects of Resolute's domain as Can sees them.

// Workspace is a workspace.
func Workspace(w resolute.Workspace) Object {
	return Object{Kind: "workspace", Name: strconv.Quote(w.Name), OwnerID: w.UserID, Owner: w.Username, WorkspaceID: w.ID}
}

// Project is a project; the owner of its workspace may change it too.
func Project(p resolute.Project, workspaceOwnerID int64) Object {
	return Object{Kind: "project", Name: strconv.Quote(p.Name), OwnerID: p.UserID, Owner: p.Username, CoOwnerID: workspaceOwnerID,
		WorkspaceID: p.WorkspaceID}
}

// Experiment is an experiment.
func Experiment(e resolute.Experiment) Object {
	return Object{Kind: "experiment", Name: itoa(e.ID), OwnerID: e.UserID, Owner: e.Username, ExperimentID: e.ID,
		WorkspaceID: e.WorkspaceID}
}

// Trial is a trial of experiment e: owned by e's owner, reported for by its
// own task.
func Trial(t resolute.Trial, e resolute.Experiment) Object {
	return Object{Kind: "trial", Name: itoa(t.ID), OwnerID: e.UserID, Owner: e.Username, TaskID: t.TaskID(),
		WorkspaceID: e.WorkspaceID}
}

// Checkpoint is a checkpoint of experiment e.
func Checkpoint(c resolute.Checkpoint, e resolute.Experiment) Object {
	return Object{Kind: "checkpoint", Name: c.UUID, OwnerID: e.UserID, Owner: e.Username, TaskID: resolute.TrialTaskID(c.TrialID),
		ExperimentID: c.ExperimentID, WorkspaceID: e.WorkspaceID}
}

// AllocationOf is one run of a task, which only that run's token reports
// for.
func AllocationOf(a resolute.Allocation) Object {
	return Object{Kind: "allocation", Name: a.ID, TaskID: a.TaskID, AllocationID: a.ID}
}

// Task is a command, notebook, shell or TensorBoard.
func Task(t resolute.Task) Object {
	return Object{Kind: "task", Name: t.ID, OwnerID: t.UserID, Owner: t.Username, TaskID: t.ID, WorkspaceID: t.WorkspaceID,
		TaskType: t.Type}
}

// Job is a job of the queue (an experiment or a task) in workspace ws,
// named as the queue names it ("experiment-3", "notebook-4").
func Job(id string, ownerID int64, owner string, ws int64) Object {
	o := Object{Kind: "job", Name: id, OwnerID: ownerID, Owner: owner, WorkspaceID: ws}
	if kind, _, _ := strings.Cut(id, "-"); kind != "experiment" {
		o.TaskType = strings.ToUpper(kind)
	}
	return o
}

// Model is a model of the registry (its versions are changed as it is).
func Model(m resolute.Model) Object {
	return Object{Kind: "model", Name: strconv.Quote(m.Name), OwnerID: m.UserID, Owner: m.Username, WorkspaceID: m.WorkspaceID}
}

// Template is a config template.
func Template(t resolute.Template) Object {
	return Object{Kind: "template", Name: strconv.Quote(t.Name), OwnerID: t.UserID, Owner: t.Username, WorkspaceID: t.WorkspaceID}
}

// UserAccount is a user's account.
func UserAccount(u resolute.User) Object {
	return Object{Kind: "user", Name: u.Username, OwnerID: u.ID, Owner: u.Username}
}

// Cluster is the master itself: its users, logs and settings.
var Cluster = Object{Kind: "cluster"}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// InWorkspace is what is created in workspace ws (a project, an
// experiment, a task, a model or a template), for the Create actions.
func InWorkspace(ws int64) Object {
	return Object{Kind: "workspace", Name: itoa(ws), WorkspaceID: ws}
}
