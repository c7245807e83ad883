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
}

// Projects lists projects by workspace, then id.
func (db *DB) Projects(ctx context.Context, f ProjectFilter) ([]resolute.Project, error) {
	rows, err := db.q.ListProjects(ctx, gen.ListProjectsParams{WorkspaceID: f.WorkspaceID, Archived: f.Archived})
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
func (db *DB) Project(ctx context.Context, id int64) (resolute.Project, error) {
	p, err := db.q.GetProject(ctx, id)
	return toProject(p), translate(err, "project %d", id)
}

// CreateProject adds a project to a workspace that is not archived.
func (db *DB) CreateProject(ctx context.Context, workspaceID int64, name, description string, userID int64) (resolute.Project, error) {
	var id int64
	err := db.inTx(ctx, func(q *gen.Queries) error {
		w, err := q.GetWorkspace(ctx, workspaceID)
		if err != nil {
			return translate(err, "workspace %d", workspaceID)
		}
		if w.Archived {
			return resolute.Errorf(resolute.EConflict, "workspace %q is archived: unarchive it to add projects", w.Name)
		}
		id, err = q.CreateProject(ctx, gen.CreateProjectParams{Name: name, Description: description, WorkspaceID: workspaceID, UserID: userID})
		return translate(err, "project %q in workspace %q", name, w.Name)
	})
	if err != nil {
		return resolute.Project{}, err
	}
	return db.Project(ctx, id)
}

// UpdateProject renames a project and sets its description; the default
// project keeps its name.
func (db *DB) UpdateProject(ctx context.Context, id int64, name, description string) (resolute.Project, error) {
	err := db.inTx(ctx, func(q *gen.Queries) error {
		p, err := q.GetProject(ctx, id)
		if err != nil {
			return translate(err, "project %d", id)
		}
		if p.Immutable && name != p.Name {
			return resolute.Errorf(resolute.EConflict, "the default project %q cannot be renamed", p.Name)
		}
		_, err = q.UpdateProject(ctx, gen.UpdateProjectParams{ID: id, Name: name, Description: description})
		return translate(err, "project %q", name)
	})
	if err != nil {
		return resolute.Project{}, err
	}
	return db.Project(ctx, id)
}

// SetProjectArchived archives or unarchives a project that is not the default.
func (db *DB) SetProjectArchived(ctx context.Context, id int64, archived bool) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := mutableProject(ctx, q, id, "archived"); err != nil {
			return err
		}
		_, err := q.SetProjectArchived(ctx, gen.SetProjectArchivedParams{ID: id, Archived: archived})
		return translate(err, "project %d", id)
	})
}

// DeleteProject deletes a project that holds no experiments.
func (db *DB) DeleteProject(ctx context.Context, id int64) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := mutableProject(ctx, q, id, "deleted"); err != nil {
			return err
		}
		p, err := q.GetProject(ctx, id)
		if err != nil {
			return translate(err, "project %d", id)
		}
		if p.NumExperiments > 0 {
			return resolute.Errorf(resolute.EConflict, "project %q is not empty: it has %d experiment(s)", p.Name, p.NumExperiments)
		}
		_, err = q.DeleteProject(ctx, id)
		return translate(err, "project %d", id)
	})
}

func mutableProject(ctx context.Context, q *gen.Queries, id int64, verb string) error {
	p, err := q.GetProject(ctx, id)
	if err != nil {
		return translate(err, "project %d", id)
	}
	if p.Immutable {
		return resolute.Errorf(resolute.EConflict, "the default project %q cannot be %s", p.Name, verb)
	}
	return nil
}

func toProject(p gen.ProjectView) resolute.Project {
	return resolute.Project{
		ID: p.ID, Name: p.Name, Description: p.Description, WorkspaceID: p.WorkspaceID,
		WorkspaceName: p.WorkspaceName, Archived: p.Archived, Immutable: p.Immutable, UserID: p.UserID,
		Username: p.Username, NumExperiments: int(p.NumExperiments), CreatedAt: p.CreatedAt,
	}
}
