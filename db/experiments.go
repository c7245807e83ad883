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

// NewExperiment is what creating an experiment stores.
type NewExperiment struct {
	ProjectID      int64
	UserID         int64
	Name           string
	Description    string
	Labels         []string
	State          string
	Config         []byte // expanded, JSON
	OriginalConfig string
	Template       string
	ParentID       *int64
	SearcherState  []byte
	Seed           int64
	Priority       *int
	Weight         float64
	MaxSlots       *int
	ResourcePool   string
	// Context is read to its end as the tar.gz of the context directory;
	// nil means none, or with ContextFrom the context of that experiment.
	Context     io.Reader
	ContextFrom *int64
}

// CreateExperiment stores an experiment and its context; it returns the id.
func (q *Queries) CreateExperiment(ctx context.Context, e NewExperiment) (int64, error) {
	labels := e.Labels
	if labels == nil {
		labels = []string{}
	}
	var tmpl *string
	if e.Template != "" {
		tmpl = &e.Template
	}
	id, err := q.q.CreateExperiment(ctx, gen.CreateExperimentParams{
		ProjectID: e.ProjectID, UserID: e.UserID, Name: e.Name, Description: e.Description, Labels: labels,
		State: e.State, Config: e.Config, OriginalConfig: e.OriginalConfig, Template: tmpl, ParentID: e.ParentID,
		SearcherState: e.SearcherState, Seed: e.Seed, Priority: int32p(e.Priority), Weight: e.Weight, MaxSlots: int32p(e.MaxSlots),
		ResourcePool: e.ResourcePool,
	})
	if err != nil {
		return 0, translate(err, "experiment %q", e.Name)
	}
	if err := q.storeExperimentContext(ctx, id, e.Context, e.ContextFrom); err != nil {
		return 0, err
	}
	return id, nil
}

// Experiment returns the experiment with id.
func (q *Queries) Experiment(ctx context.Context, id int64) (resolute.Experiment, error) {
	e, err := q.q.GetExperiment(ctx, id)
	return toExperiment(e), translate(err, "experiment %d", id)
}

// ExperimentForUpdate locks the experiment with id until the transaction
// ends and returns it.
func (q *Queries) ExperimentForUpdate(ctx context.Context, id int64) (resolute.Experiment, error) {
	if _, err := q.q.LockExperimentRow(ctx, id); err != nil {
		return resolute.Experiment{}, translate(err, "experiment %d", id)
	}
	return q.Experiment(ctx, id)
}

// ExperimentOriginalConfig returns the YAML as submitted.
func (q *Queries) ExperimentOriginalConfig(ctx context.Context, id int64) (string, error) {
	s, err := q.q.GetExperimentOriginalConfig(ctx, id)
	return s, translate(err, "experiment %d", id)
}

// ExperimentFilter selects experiments; zero fields select all.
type ExperimentFilter struct {
	ProjectID *int64
	Archived  *bool
	States    []string
	Limit     int
	Offset    int
	Viewer    Viewer
}

// Experiments lists experiments, newest first.
func (q *Queries) Experiments(ctx context.Context, f ExperimentFilter) ([]resolute.Experiment, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	states := f.States
	if states == nil {
		states = []string{}
	}
	viewer, roles := f.Viewer.params()
	rows, err := q.q.ListExperiments(ctx, gen.ListExperimentsParams{ProjectID: f.ProjectID, Archived: f.Archived,
		States: states, Lim: int32(f.Limit), Off: int32(f.Offset), ViewerID: viewer, ViewerRoles: roles})
	if err != nil {
		return nil, translate(err, "experiments")
	}
	out := make([]resolute.Experiment, len(rows))
	for i, r := range rows {
		out[i] = toExperiment(r)
	}
	return out, nil
}

// ActiveExperimentIDs lists the experiments that are not finished.
func (q *Queries) ActiveExperimentIDs(ctx context.Context) ([]int64, error) {
	ids, err := q.q.ListActiveExperimentIDs(ctx)
	return ids, translate(err, "active experiments")
}

// LockedExperiment is an experiment's search state, read under its lock.
type LockedExperiment struct {
	ID             int64
	State          string
	Config         []byte
	SearcherState  []byte
	SearcherDone   bool
	SearcherFailed bool
	Restarts       int
	Seed           int64
}

// LockExperiment reads the experiment's search state and locks the row until
// the transaction ends: use it inside InTx.
func (q *Queries) LockExperiment(ctx context.Context, id int64) (LockedExperiment, error) {
	r, err := q.q.LockExperiment(ctx, id)
	return LockedExperiment{ID: r.ID, State: r.State, Config: r.Config, SearcherState: r.SearcherState,
			SearcherDone: r.SearcherDone, SearcherFailed: r.SearcherFailed, Restarts: int(r.Restarts), Seed: r.Seed},
		translate(err, "experiment %d", id)
}

// SetExperimentState sets the state (and the end time of final states).
func (q *Queries) SetExperimentState(ctx context.Context, id int64, state string) error {
	return translate(q.q.SetExperimentState(ctx, gen.SetExperimentStateParams{ID: id, State: state}), "experiment %d", id)
}

// SaveSearcher stores the searcher's state and progress.
func (q *Queries) SaveSearcher(ctx context.Context, id int64, state []byte, done, failed bool, progress float64) error {
	err := q.q.SaveSearcher(ctx, gen.SaveSearcherParams{ID: id, SearcherState: state, SearcherDone: done, SearcherFailed: failed, Progress: progress})
	return translate(err, "experiment %d", id)
}

// AddExperimentRestart counts one failure against max_restarts and returns
// the new count.
func (q *Queries) AddExperimentRestart(ctx context.Context, id int64) (int, error) {
	n, err := q.q.AddExperimentRestart(ctx, id)
	return int(n), translate(err, "experiment %d", id)
}

// SetExperimentArchived archives or unarchives an experiment.
func (q *Queries) SetExperimentArchived(ctx context.Context, id int64, archived bool) error {
	return translate(q.q.SetExperimentArchived(ctx, gen.SetExperimentArchivedParams{ID: id, Archived: archived}), "experiment %d", id)
}

// UpdateExperiment stores the editable fields of e.
func (q *Queries) UpdateExperiment(ctx context.Context, e resolute.Experiment) error {
	labels := e.Labels
	if labels == nil {
		labels = []string{}
	}
	return translate(q.q.UpdateExperiment(ctx, gen.UpdateExperimentParams{ID: e.ID, Name: e.Name, Description: e.Description,
		Labels: labels, Notes: e.Notes, Priority: int32p(e.Priority), Weight: e.Weight, MaxSlots: int32p(e.MaxSlots)}), "experiment %d", e.ID)
}

// MoveExperiment puts an experiment in another project.
func (q *Queries) MoveExperiment(ctx context.Context, id, projectID int64) error {
	return translate(q.q.MoveExperiment(ctx, gen.MoveExperimentParams{ID: id, ProjectID: projectID}), "experiment %d", id)
}

// DeleteExperiment removes an experiment and everything it reported.
func (q *Queries) DeleteExperiment(ctx context.Context, id int64) error {
	return translate(q.q.DeleteExperiment(ctx, id), "experiment %d", id)
}

// SetExperimentBestValidation records the best searcher metric so far.
func (q *Queries) SetExperimentBestValidation(ctx context.Context, id int64, v float64) error {
	return translate(q.q.SetExperimentBestValidation(ctx, gen.SetExperimentBestValidationParams{ID: id, BestValidation: &v}), "experiment %d", id)
}

func toExperiment(e gen.ExperimentView) resolute.Experiment {
	out := resolute.Experiment{
		ID: e.ID, Name: e.Name, Description: e.Description, Labels: e.Labels, Notes: e.Notes, State: e.State,
		Archived: e.Archived, ProjectID: e.ProjectID, ProjectName: e.ProjectName, WorkspaceID: e.WorkspaceID,
		WorkspaceName: e.WorkspaceName, UserID: e.UserID, Username: e.Username, Config: json.RawMessage(e.Config),
		ParentID: e.ParentID, Seed: e.Seed, Restarts: int(e.Restarts), Progress: e.Progress, BestValidation: e.BestValidation,
		Priority: intp(e.Priority), Weight: e.Weight, MaxSlots: intp(e.MaxSlots), NumTrials: int(e.NumTrials),
		SearcherDone: e.SearcherDone, CreatedAt: e.CreatedAt, EndedAt: e.EndedAt,
		ResourcePool: e.ResourcePool, QueuePosition: e.QueuePosition,
	}
	if e.Template != nil {
		out.Template = *e.Template
	}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	return out
}

func int32p(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}

func intp(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// QueuedExperiments lists the experiments that may still run, by pool and
// queue position; pool "" lists every pool.
func (q *Queries) QueuedExperiments(ctx context.Context, pool string) ([]resolute.Experiment, error) {
	var p *string
	if pool != "" {
		p = &pool
	}
	rows, err := q.q.ListQueuedExperiments(ctx, p)
	if err != nil {
		return nil, translate(err, "job queue")
	}
	out := make([]resolute.Experiment, len(rows))
	for i, r := range rows {
		out[i] = toExperiment(r)
	}
	return out, nil
}

// QueueEntry is one job's place in a pool's queue: an experiment
// ("experiment-N") or a task (its id).
type QueueEntry struct {
	JobID    string
	Position float64
}

// LockPoolQueue reads a pool's queue and locks it until the transaction
// ends, so concurrent reorders apply one after another.
func (q *Queries) LockPoolQueue(ctx context.Context, pool string) ([]QueueEntry, error) {
	if err := q.q.LockQueue(ctx, pool); err != nil {
		return nil, translate(err, "queue of pool %q", pool)
	}
	rows, err := q.q.ListPoolQueue(ctx, pool)
	if err != nil {
		return nil, translate(err, "queue of pool %q", pool)
	}
	out := make([]QueueEntry, len(rows))
	for i, r := range rows {
		out[i] = QueueEntry{JobID: r.JobID, Position: r.QueuePosition}
	}
	return out, nil
}

// SetQueuePosition moves a job, an experiment ("experiment-N") or a task,
// in its pool's queue.
func (q *Queries) SetQueuePosition(ctx context.Context, jobID string, pos float64) error {
	if id, ok := strings.CutPrefix(jobID, "experiment-"); ok {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return resolute.Errorf(resolute.EInvalid, "%q is not a job id", jobID)
		}
		return translate(q.q.SetQueuePosition(ctx, gen.SetQueuePositionParams{ID: n, QueuePosition: pos}), "experiment %d", n)
	}
	return translate(q.q.SetTaskQueuePosition(ctx, gen.SetTaskQueuePositionParams{ID: jobID, QueuePosition: pos}), "task %s", jobID)
}

// SetExperimentScheduling sets an experiment's priority, weight and pool.
func (q *Queries) SetExperimentScheduling(ctx context.Context, id int64, priority *int, weight float64, pool string) error {
	return translate(q.q.SetExperimentScheduling(ctx, gen.SetExperimentSchedulingParams{ID: id, Priority: int32p(priority),
		Weight: weight, ResourcePool: pool}), "experiment %d", id)
}
