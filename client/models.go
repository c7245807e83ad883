package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// ModelFilter narrows Models; the zero value lists all of them, newest
// first.
type ModelFilter struct {
	Archived    *bool    // only archived (true) or unarchived (false) ones
	Name        string   // a part of the name or description
	Labels      []string // only models with every one of these labels
	SortBy      string   // name, updated or versions
	WorkspaceID int64    // only the models of this workspace
}

// modelPath is the API path of a model, with more path segments appended.
func modelPath(name string, more ...string) string {
	p := "/api/v1/models/" + url.PathEscape(name)
	for _, m := range more {
		p += "/" + url.PathEscape(m)
	}
	return p
}

// Models lists models (GET /api/v1/models).
func (c *Client) Models(ctx context.Context, f ModelFilter) ([]resolute.Model, error) {
	q := url.Values{}
	boolQuery(q, "archived", f.Archived)
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if len(f.Labels) > 0 {
		q.Set("labels", strings.Join(f.Labels, ","))
	}
	if f.SortBy != "" {
		q.Set("sort_by", f.SortBy)
	}
	if f.WorkspaceID != 0 {
		q.Set("workspace_id", strconv.FormatInt(f.WorkspaceID, 10))
	}
	var out resolute.ModelsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/models", q, nil, &out)
	return out.Models, err
}

// Model returns one model (GET /api/v1/models/{name}).
func (c *Client) Model(ctx context.Context, name string) (resolute.Model, error) {
	var out resolute.ModelResponse
	err := c.do(ctx, http.MethodGet, modelPath(name), nil, nil, &out)
	return out.Model, err
}

// CreateModel adds a model (POST /api/v1/models).
func (c *Client) CreateModel(ctx context.Context, req resolute.ModelRequest) (resolute.Model, error) {
	var out resolute.ModelResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/models", nil, req, &out)
	return out.Model, err
}

// PatchModel edits a model; absent fields stay (PATCH /api/v1/models/{name}).
func (c *Client) PatchModel(ctx context.Context, name string, req resolute.ModelRequest) (resolute.Model, error) {
	var out resolute.ModelResponse
	err := c.do(ctx, http.MethodPatch, modelPath(name), nil, req, &out)
	return out.Model, err
}

// DeleteModel deletes a model with its versions and aliases; the
// checkpoints stay (DELETE /api/v1/models/{name}).
func (c *Client) DeleteModel(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, modelPath(name), nil, nil, nil)
}

// SetModelArchived archives or unarchives a model
// (POST /api/v1/models/{name}/archive or /unarchive).
func (c *Client) SetModelArchived(ctx context.Context, name string, archived bool) error {
	verb := "unarchive"
	if archived {
		verb = "archive"
	}
	return c.do(ctx, http.MethodPost, modelPath(name, verb), nil, nil, nil)
}

// MoveModel moves a model to another workspace
// (POST /api/v1/models/{name}/move).
func (c *Client) MoveModel(ctx context.Context, name string, workspaceID int64) error {
	return c.do(ctx, http.MethodPost, modelPath(name, "move"), nil, resolute.MoveModelRequest{DestinationWorkspaceID: workspaceID}, nil)
}

// ModelVersions returns a model with its versions, newest first
// (GET /api/v1/models/{name}/versions).
func (c *Client) ModelVersions(ctx context.Context, name string) (resolute.ModelVersionsResponse, error) {
	var out resolute.ModelVersionsResponse
	err := c.do(ctx, http.MethodGet, modelPath(name, "versions"), nil, nil, &out)
	return out, err
}

// ModelVersion returns one version of a model with its validation metrics
// (GET /api/v1/models/{name}/versions/{ref}); ref is a number, "latest" or
// "@alias".
func (c *Client) ModelVersion(ctx context.Context, name, ref string) (resolute.ModelVersion, error) {
	var out resolute.ModelVersionResponse
	err := c.do(ctx, http.MethodGet, modelPath(name, "versions", ref), nil, nil, &out)
	return out.ModelVersion, err
}

// RegisterModelVersion registers a checkpoint as a model's next version
// (POST /api/v1/models/{name}/versions).
func (c *Client) RegisterModelVersion(ctx context.Context, name string, req resolute.ModelVersionRequest) (resolute.ModelVersion, error) {
	var out resolute.ModelVersionResponse
	err := c.do(ctx, http.MethodPost, modelPath(name, "versions"), nil, req, &out)
	return out.ModelVersion, err
}

// DeleteModelVersion deletes one version and the aliases pointing at it
// (DELETE /api/v1/models/{name}/versions/{ref}).
func (c *Client) DeleteModelVersion(ctx context.Context, name, ref string) error {
	return c.do(ctx, http.MethodDelete, modelPath(name, "versions", ref), nil, nil, nil)
}

// SetModelAlias points an alias at a version, moving it if it pointed
// elsewhere (PUT /api/v1/models/{name}/aliases/{alias}).
func (c *Client) SetModelAlias(ctx context.Context, name, alias string, version int) (resolute.ModelVersion, error) {
	var out resolute.ModelVersionResponse
	err := c.do(ctx, http.MethodPut, modelPath(name, "aliases", alias), nil, resolute.AliasRequest{Version: version}, &out)
	return out.ModelVersion, err
}

// DeleteModelAlias removes an alias
// (DELETE /api/v1/models/{name}/aliases/{alias}).
func (c *Client) DeleteModelAlias(ctx context.Context, name, alias string) error {
	return c.do(ctx, http.MethodDelete, modelPath(name, "aliases", alias), nil, nil, nil)
}
