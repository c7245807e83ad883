package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// ProjectFilter narrows Projects; the zero value lists all of them.
type ProjectFilter struct {
	WorkspaceID int64 // 0 means every workspace
	Archived    *bool // only archived (true) or unarchived (false) ones
}

// Projects lists projects (GET /api/v1/projects).
func (c *Client) Projects(ctx context.Context, f ProjectFilter) ([]resolute.Project, error) {
	q := url.Values{}
	if f.WorkspaceID != 0 {
		q.Set("workspace_id", strconv.FormatInt(f.WorkspaceID, 10))
	}
	boolQuery(q, "archived", f.Archived)
	var out resolute.ProjectsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/projects", q, nil, &out)
	return out.Projects, err
}

// Project returns one project (GET /api/v1/projects/{id}).
func (c *Client) Project(ctx context.Context, id int64) (resolute.Project, error) {
	var out resolute.ProjectResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/projects/%d", id), nil, nil, &out)
	return out.Project, err
}

// CreateProject adds a project to a workspace
// (POST /api/v1/workspaces/{id}/projects).
func (c *Client) CreateProject(ctx context.Context, workspaceID int64, name, description string) (resolute.Project, error) {
	var out resolute.ProjectResponse
	err := c.do(ctx, http.MethodPost, idPath("/api/v1/workspaces/%d/projects", workspaceID), nil,
		resolute.ProjectRequest{Name: &name, Description: &description}, &out)
	return out.Project, err
}

// PatchProject changes the fields of req that are set
// (PATCH /api/v1/projects/{id}).
func (c *Client) PatchProject(ctx context.Context, id int64, req resolute.ProjectRequest) (resolute.Project, error) {
	var out resolute.ProjectResponse
	err := c.do(ctx, http.MethodPatch, idPath("/api/v1/projects/%d", id), nil, req, &out)
	return out.Project, err
}

// ArchiveProject archives a project (POST /api/v1/projects/{id}/archive).
func (c *Client) ArchiveProject(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/projects/%d/archive", id), nil, nil, nil)
}

// UnarchiveProject unarchives a project (POST /api/v1/projects/{id}/unarchive).
func (c *Client) UnarchiveProject(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/projects/%d/unarchive", id), nil, nil, nil)
}

// DeleteProject deletes an empty project (DELETE /api/v1/projects/{id}).
func (c *Client) DeleteProject(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/api/v1/projects/%d", id), nil, nil, nil)
}
