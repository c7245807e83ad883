package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// WorkspaceFilter narrows Workspaces; the zero value lists all of them.
type WorkspaceFilter struct {
	Archived *bool  // only archived (true) or unarchived (false) ones
	Name     string // only the one with this exact name
}

// Workspaces lists workspaces (GET /api/v1/workspaces).
func (c *Client) Workspaces(ctx context.Context, f WorkspaceFilter) ([]resolute.Workspace, error) {
	q := url.Values{}
	boolQuery(q, "archived", f.Archived)
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	var out resolute.WorkspacesResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/workspaces", q, nil, &out)
	return out.Workspaces, err
}

// WorkspaceByName returns the workspace named name, or a not_found error.
func (c *Client) WorkspaceByName(ctx context.Context, name string) (resolute.Workspace, error) {
	list, err := c.Workspaces(ctx, WorkspaceFilter{Name: name})
	if err != nil {
		return resolute.Workspace{}, err
	}
	for _, ws := range list {
		if ws.Name == name {
			return ws, nil
		}
	}
	return resolute.Workspace{}, resolute.Errorf(resolute.ENotFound, "workspace %q not found", name)
}

// Workspace returns one workspace (GET /api/v1/workspaces/{id}).
func (c *Client) Workspace(ctx context.Context, id int64) (resolute.Workspace, error) {
	var out resolute.WorkspaceResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/workspaces/%d", id), nil, nil, &out)
	return out.Workspace, err
}

// CreateWorkspace adds a workspace (POST /api/v1/workspaces).
func (c *Client) CreateWorkspace(ctx context.Context, name string) (resolute.Workspace, error) {
	var out resolute.WorkspaceResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/workspaces", nil, resolute.NameRequest{Name: name}, &out)
	return out.Workspace, err
}

// RenameWorkspace renames a workspace (PATCH /api/v1/workspaces/{id}).
func (c *Client) RenameWorkspace(ctx context.Context, id int64, name string) (resolute.Workspace, error) {
	var out resolute.WorkspaceResponse
	err := c.do(ctx, http.MethodPatch, idPath("/api/v1/workspaces/%d", id), nil, resolute.NameRequest{Name: name}, &out)
	return out.Workspace, err
}

// ArchiveWorkspace archives a workspace (POST /api/v1/workspaces/{id}/archive).
func (c *Client) ArchiveWorkspace(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/workspaces/%d/archive", id), nil, nil, nil)
}

// UnarchiveWorkspace unarchives a workspace
// (POST /api/v1/workspaces/{id}/unarchive).
func (c *Client) UnarchiveWorkspace(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/workspaces/%d/unarchive", id), nil, nil, nil)
}

// DeleteWorkspace deletes an empty workspace (DELETE /api/v1/workspaces/{id}).
func (c *Client) DeleteWorkspace(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/api/v1/workspaces/%d", id), nil, nil, nil)
}

// WorkspaceProjects lists a workspace's projects
// (GET /api/v1/workspaces/{id}/projects); archived as in WorkspaceFilter.
func (c *Client) WorkspaceProjects(ctx context.Context, id int64, archived *bool) ([]resolute.Project, error) {
	q := url.Values{}
	boolQuery(q, "archived", archived)
	var out resolute.ProjectsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/workspaces/%d/projects", id), q, nil, &out)
	return out.Projects, err
}
