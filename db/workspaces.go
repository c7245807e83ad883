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
	settings, err := q.allWorkspaceSettings(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]resolute.Workspace, len(rows))
	for i, r := range rows {
		out[i] = toWorkspace(r)
		out[i].WorkspaceSettingsView = settings[r.ID].View()
	}
	return out, nil
}

// Workspace returns the workspace with id, its settings' secrets masked.
func (q *Queries) Workspace(ctx context.Context, id int64) (resolute.Workspace, error) {
	row, err := q.q.GetWorkspace(ctx, id)
	if err != nil {
		return toWorkspace(row), translate(err, "workspace %d", id)
	}
	return q.withSettings(ctx, toWorkspace(row))
}

// withSettings adds w's settings, masked, to w.
func (q *Queries) withSettings(ctx context.Context, w resolute.Workspace) (resolute.Workspace, error) {
	s, err := q.WorkspaceSettings(ctx, w.ID)
	w.WorkspaceSettingsView = s.View()
	return w, err
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
	row, err := q.q.GetWorkspaceByName(ctx, name)
	if err != nil {
		return toWorkspace(row), translate(err, "workspace %q", name)
	}
	return q.withSettings(ctx, toWorkspace(row))
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
