package db

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// ExperimentSorts are the columns the experiment list sorts by.
var ExperimentSorts = []string{"id", "name", "state", "progress", "best", "searcher", "trials", "user", "start",
	"duration", "labels", "pool"}

// ExperimentListFilter selects a page of the experiment list; zero fields
// select all. Sort is one of ExperimentSorts ("" is id); Search matches
// names and descriptions, case-insensitively.
type ExperimentListFilter struct {
	ProjectID   *int64
	WorkspaceID *int64
	Archived    *bool
	States      []string
	Username    string
	Label       string
	Search      string
	Sort        string
	Descending  bool
	Limit       int
	Offset      int
	// Viewer limits the list to what one user sees under RBAC.
	Viewer Viewer
}

// ListedExperiment is an experiment as the list shows it: no config, but
// its searcher's name, metric and direction.
type ListedExperiment struct {
	resolute.Experiment
	Searcher        string
	Metric          string
	SmallerIsBetter bool
}

// ExperimentPage lists one page of experiments under f, and how many
// experiments f matches in all.
//
// Its ORDER BY picks the column with CASE on the sort parameter: planned
// for the values at hand, the CASEs fold away and the page comes from the
// column's index; a generic plan (which Postgres may switch a prepared
// statement to) would sort every row. So the two queries run in a read-only
// transaction that asks for custom plans.
func (db *DB) ExperimentPage(ctx context.Context, f ExperimentListFilter) ([]ListedExperiment, int, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.Sort == "" {
		f.Sort = "id"
	}
	states := f.States
	if states == nil {
		states = []string{}
	}
	var pattern *string
	if f.Search != "" {
		p := "%" + likeEscaper.Replace(f.Search) + "%"
		pattern = &p
	}
	viewer, roles := f.Viewer.params()
	var rows []gen.ListExperimentPageRow
	var total int32
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_custom_plan"); err != nil {
			return err
		}
		q := db.q.WithTx(tx)
		var err error
		rows, err = q.ListExperimentPage(ctx, gen.ListExperimentPageParams{ProjectID: f.ProjectID, WorkspaceID: f.WorkspaceID,
			Archived: f.Archived, States: states, Username: nonEmpty(f.Username), Label: nonEmpty(f.Label), Pattern: pattern,
			Sort: f.Sort, Descending: f.Descending, Lim: int32(f.Limit), Off: int32(f.Offset), ViewerID: viewer, ViewerRoles: roles})
		if err != nil {
			return err
		}
		total, err = q.CountExperimentPage(ctx, gen.CountExperimentPageParams{ProjectID: f.ProjectID, WorkspaceID: f.WorkspaceID,
			Archived: f.Archived, States: states, Username: nonEmpty(f.Username), Label: nonEmpty(f.Label), Pattern: pattern,
			ViewerID: viewer, ViewerRoles: roles})
		return err
	})
	if err != nil {
		return nil, 0, translate(err, "experiments")
	}
	out := make([]ListedExperiment, len(rows))
	for i, r := range rows {
		e := ListedExperiment{Experiment: resolute.Experiment{ID: r.ID, Name: r.Name, Description: r.Description,
			Labels: r.Labels, State: r.State, Archived: r.Archived, Progress: r.Progress, BestValidation: r.BestValidation,
			ResourcePool: r.ResourcePool, CreatedAt: r.CreatedAt, EndedAt: r.EndedAt, ProjectID: r.ProjectID,
			ProjectName: r.ProjectName, WorkspaceID: r.WorkspaceID, WorkspaceName: r.WorkspaceName, UserID: r.UserID,
			Username: r.Username, NumTrials: int(r.NumTrials)}, SmallerIsBetter: r.SmallerIsBetter == nil || *r.SmallerIsBetter}
		if e.Labels == nil {
			e.Labels = []string{}
		}
		if r.SearcherName != nil {
			e.Searcher = *r.SearcherName
		}
		if r.SearcherMetric != nil {
			e.Metric = *r.SearcherMetric
		}
		out[i] = e
	}
	return out, int(total), nil
}

// likeEscaper makes text match itself in a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ExperimentLabels lists every label experiments carry, sorted.
func (q *Queries) ExperimentLabels(ctx context.Context) ([]string, error) {
	labels, err := q.q.ListExperimentLabels(ctx)
	return labels, translate(err, "experiment labels")
}

// ProjectActivity is how busy a project is.
type ProjectActivity struct {
	ProjectID      int64
	WorkspaceID    int64
	NumExperiments int
	NumActive      int
	LastActivity   *time.Time // the last start or end of one of its experiments
}

// ProjectActivities returns the activity of every project, by project id.
func (q *Queries) ProjectActivities(ctx context.Context) (map[int64]ProjectActivity, error) {
	rows, err := q.q.ListProjectActivity(ctx)
	if err != nil {
		return nil, translate(err, "project activity")
	}
	out := make(map[int64]ProjectActivity, len(rows))
	for _, r := range rows {
		a := ProjectActivity{ProjectID: r.ProjectID, WorkspaceID: r.WorkspaceID, NumExperiments: int(r.NumExperiments), NumActive: int(r.NumActive)}
		if r.LastActivity.Unix() != 0 {
			t := r.LastActivity
			a.LastActivity = &t
		}
		out[r.ProjectID] = a
	}
	return out, nil
}
