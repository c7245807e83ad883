package db

import (
	"context"

	"github.com/resolute-ml/resolute/db/gen"
)

// TopicOwner is the workspace of an object that a live topic names, and a
// task's type ("" for experiments and trials).
type TopicOwner struct {
	WorkspaceID int64
	TaskType    string
}

// TopicOwners returns the workspaces of the experiments, trials and tasks
// named, keyed "experiment:ID", "trial:ID" and "task:ID"; those that do not
// exist (any more) are missing.
func (q *Queries) TopicOwners(ctx context.Context, experiments, trials []int64, tasks []string) (map[string]TopicOwner, error) {
	if experiments == nil {
		experiments = []int64{}
	}
	if trials == nil {
		trials = []int64{}
	}
	if tasks == nil {
		tasks = []string{}
	}
	rows, err := q.q.TopicWorkspaces(ctx, gen.TopicWorkspacesParams{ExperimentIds: experiments, TrialIds: trials, TaskIds: tasks})
	if err != nil {
		return nil, translate(err, "the live topics' objects")
	}
	out := make(map[string]TopicOwner, len(rows))
	for _, r := range rows {
		out[r.Kind+":"+r.ID] = TopicOwner{WorkspaceID: r.WorkspaceID, TaskType: r.TaskType}
	}
	return out, nil
}
