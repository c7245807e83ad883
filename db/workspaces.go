package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// Workspaces lists workspaces; archived nil lists all, else only those with
// that archived flag.
func (db *DB) Workspaces(ctx context.Context, archived *bool) ([]resolute.Workspace, error) {
	rows, err := db.q.ListWorkspaces(ctx, archived)
	if err != nil {
		return nil, translate(err, "workspaces")
	}
	out := make([]resolute.Workspace, len(rows))
	for i, r := range rows {
		out[i] = toWorkspace(r)
	}
	return out, nil
}

// Workspace returns the workspace with id.
func (db *DB) Workspace(ctx context.Context, id int64) (resolute.Workspace, error) {
	w, err := db.q.GetWorkspace(ctx, id)
	return toWorkspace(w), translate(err, "workspace %d", id)
}

// WorkspaceByName returns the workspace called name.
func (db *DB) WorkspaceByName(ctx context.Context, name string) (resolute.Workspace, error) {
	w, err := db.q.GetWorkspaceByName(ctx, name)
	return toWorkspace(w), translate(err, "workspace %q", name)
}

// CreateWorkspace adds a workspace owned by userID.
func (db *DB) CreateWorkspace(ctx context.Context, name string, userID int64) (resolute.Workspace, error) {
	id, err := db.q.CreateWorkspace(ctx, gen.CreateWorkspaceParams{Name: name, UserID: userID})
	if err != nil {
		return resolute.Workspace{}, translate(err, "workspace %q", name)
	}
	return db.Workspace(ctx, id)
}

// RenameWorkspace renames a workspace that is not the default one.
func (db *DB) RenameWorkspace(ctx context.Context, id int64, name string) (resolute.Workspace, error) {
	err := db.inTx(ctx, func(q *gen.Queries) error {
		if err := mutableWorkspace(ctx, q, id, "renamed"); err != nil {
			return err
		}
		_, err := q.RenameWorkspace(ctx, gen.RenameWorkspaceParams{ID: id, Name: name})
		return translate(err, "workspace %q", name)
	})
	if err != nil {
		return resolute.Workspace{}, err
	}
	return db.Workspace(ctx, id)
}

// SetWorkspaceArchived archives or unarchives a workspace that is not the
// default one.
func (db *DB) SetWorkspaceArchived(ctx context.Context, id int64, archived bool) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := mutableWorkspace(ctx, q, id, "archived"); err != nil {
			return err
		}
		_, err := q.SetWorkspaceArchived(ctx, gen.SetWorkspaceArchivedParams{ID: id, Archived: archived})
		return translate(err, "workspace %d", id)
	})
}

// DeleteWorkspace deletes a workspace that holds no projects.
func (db *DB) DeleteWorkspace(ctx context.Context, id int64) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := mutableWorkspace(ctx, q, id, "deleted"); err != nil {
			return err
		}
		w, err := q.GetWorkspace(ctx, id)
		if err != nil {
			return translate(err, "workspace %d", id)
		}
		if w.NumProjects > 0 {
			return resolute.Errorf(resolute.EConflict, "workspace %q is not empty: it has %d project(s); delete or move them first", w.Name, w.NumProjects)
		}
		_, err = q.DeleteWorkspace(ctx, id)
		return translate(err, "workspace %d", id)
	})
}

func mutableWorkspace(ctx context.Context, q *gen.Queries, id int64, verb string) error {
	w, err := q.GetWorkspace(ctx, id)
	if err != nil {
		return translate(err, "workspace %d", id)
	}
	if w.Immutable {
		return resolute.Errorf(resolute.EConflict, "the default workspace %q cannot be %s", w.Name, verb)
	}
	return nil
}

func toWorkspace(w gen.WorkspaceView) resolute.Workspace {
	return resolute.Workspace{
		ID: w.ID, Name: w.Name, Archived: w.Archived, Immutable: w.Immutable, UserID: w.UserID,
		Username: w.Username, NumProjects: int(w.NumProjects), CreatedAt: w.CreatedAt,
	}
}
