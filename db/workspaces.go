package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// Workspaces lists workspaces; archived nil lists all, else only those with
// that archived flag.
func (q *Queries) Workspaces(ctx context.Context, archived *bool) ([]resolute.Workspace, error) {
	return q.WorkspacesFor(ctx, archived, Viewer{})
}

// WorkspacesFor lists the workspaces v sees, as Workspaces does.
func (q *Queries) WorkspacesFor(ctx context.Context, archived *bool, v Viewer) ([]resolute.Workspace, error) {
	id, roles := v.params()
	rows, err := q.q.ListWorkspaces(ctx, gen.ListWorkspacesParams{Archived: archived, ViewerID: id, ViewerRoles: roles})
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
func (q *Queries) Workspace(ctx context.Context, id int64) (resolute.Workspace, error) {
	w, err := q.q.GetWorkspace(ctx, id)
	return toWorkspace(w), translate(err, "workspace %d", id)
}

// WorkspaceForUpdate locks the workspace with id until the transaction ends
// and returns it.
func (q *Queries) WorkspaceForUpdate(ctx context.Context, id int64) (resolute.Workspace, error) {
	if _, err := q.q.LockWorkspace(ctx, id); err != nil {
		return resolute.Workspace{}, translate(err, "workspace %d", id)
	}
	return q.Workspace(ctx, id)
}

// WorkspaceByName returns the workspace called name.
func (q *Queries) WorkspaceByName(ctx context.Context, name string) (resolute.Workspace, error) {
	w, err := q.q.GetWorkspaceByName(ctx, name)
	return toWorkspace(w), translate(err, "workspace %q", name)
}

// CreateWorkspace adds a workspace owned by userID.
func (q *Queries) CreateWorkspace(ctx context.Context, name string, userID int64) (resolute.Workspace, error) {
	id, err := q.q.CreateWorkspace(ctx, gen.CreateWorkspaceParams{Name: name, UserID: userID})
	if err != nil {
		return resolute.Workspace{}, translate(err, "workspace %q", name)
	}
	return q.Workspace(ctx, id)
}

// RenameWorkspace renames a workspace.
func (q *Queries) RenameWorkspace(ctx context.Context, id int64, name string) (resolute.Workspace, error) {
	if _, err := q.q.RenameWorkspace(ctx, gen.RenameWorkspaceParams{ID: id, Name: name}); err != nil {
		return resolute.Workspace{}, translate(err, "workspace %q", name)
	}
	return q.Workspace(ctx, id)
}

// SetWorkspaceArchived archives or unarchives a workspace.
func (q *Queries) SetWorkspaceArchived(ctx context.Context, id int64, archived bool) error {
	_, err := q.q.SetWorkspaceArchived(ctx, gen.SetWorkspaceArchivedParams{ID: id, Archived: archived})
	return translate(err, "workspace %d", id)
}

// DeleteWorkspace deletes a workspace.
func (q *Queries) DeleteWorkspace(ctx context.Context, id int64) error {
	_, err := q.q.DeleteWorkspace(ctx, id)
	return translate(err, "workspace %d", id)
}

func toWorkspace(w gen.WorkspaceView) resolute.Workspace {
	return resolute.Workspace{
		ID: w.ID, Name: w.Name, Archived: w.Archived, Immutable: w.Immutable, UserID: w.UserID,
		Username: w.Username, NumProjects: int(w.NumProjects), CreatedAt: w.CreatedAt,
	}
}
