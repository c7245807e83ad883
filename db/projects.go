package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// ProjectFilter selects projects; nil fields select all.
type ProjectFilter struct {
	WorkspaceID *int64
	Archived    *bool
	Viewer      Viewer
}

// Projects lists projects by workspace, then id.
func (q *Queries) Projects(ctx context.Context, f ProjectFilter) ([]resolute.Project, error) {
	viewer, roles := f.Viewer.params()
	rows, err := q.q.ListProjects(ctx, gen.ListProjectsParams{WorkspaceID: f.WorkspaceID, Archived: f.Archived,
		ViewerID: viewer, ViewerRoles: roles})
	if err != nil {
		return nil, translate(err, "projects")
	}
	out := make([]resolute.Project, len(rows))
	for i, r := range rows {
		out[i] = toProject(r)
	}
	return out, nil
}

// Project returns the project with id.
func (q *Queries) Project(ctx context.Context, id int64) (resolute.Project, error) {
	p, err := q.q.GetProject(ctx, id)
	return toProject(p), translate(err, "project %d", id)
}

// ProjectForUpdate locks the project with id until the transaction ends and
// returns it.
func (q *Queries) ProjectForUpdate(ctx context.Context, id int64) (resolute.Project, error) {
	if _, err := q.q.LockProject(ctx, id); err != nil {
		return resolute.Project{}, translate(err, "project %d", id)
	}
	return q.Project(ctx, id)
}

// CreateProject adds a project to a workspace.
func (q *Queries) CreateProject(ctx context.Context, w resolute.Workspace, name, description string, userID int64) (resolute.Project, error) {
	id, err := q.q.CreateProject(ctx, gen.CreateProjectParams{Name: name, Description: description, WorkspaceID: w.ID, UserID: userID})
	if err != nil {
		return resolute.Project{}, translate(err, "project %q in workspace %q", name, w.Name)
	}
	return q.Project(ctx, id)
}

// UpdateProject renames a project and sets its description.
func (q *Queries) UpdateProject(ctx context.Context, id int64, name, description string) (resolute.Project, error) {
	if _, err := q.q.UpdateProject(ctx, gen.UpdateProjectParams{ID: id, Name: name, Description: description}); err != nil {
		return resolute.Project{}, translate(err, "project %q", name)
	}
	return q.Project(ctx, id)
}

// SetProjectArchived archives or unarchives a project.
func (q *Queries) SetProjectArchived(ctx context.Context, id int64, archived bool) error {
	_, err := q.q.SetProjectArchived(ctx, gen.SetProjectArchivedParams{ID: id, Archived: archived})
	return translate(err, "project %d", id)
}

// DeleteProject deletes a project.
func (q *Queries) DeleteProject(ctx context.Context, id int64) error {
	_, err := q.q.DeleteProject(ctx, id)
	return translate(err, "project %d", id)
}

func toProject(p gen.ProjectView) resolute.Project {
	return resolute.Project{
		ID: p.ID, Name: p.Name, Description: p.Description, WorkspaceID: p.WorkspaceID,
		WorkspaceName: p.WorkspaceName, Archived: p.Archived, Immutable: p.Immutable, UserID: p.UserID,
		Username: p.Username, NumExperiments: int(p.NumExperiments), CreatedAt: p.CreatedAt,
	}
}
