package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// CreateWorkspaceWith creates a workspace with settings (POST
// /api/v1/workspaces): req.Name and any of the settings.
func (c *Client) CreateWorkspaceWith(ctx context.Context, req resolute.WorkspaceRequest) (resolute.Workspace, error) {
	var out resolute.WorkspaceResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/workspaces", nil, req, &out)
	return out.Workspace, err
}

// PatchWorkspace changes a workspace's name and settings (PATCH
// /api/v1/workspaces/{id}); fields left nil stay as they are.
func (c *Client) PatchWorkspace(ctx context.Context, id int64, req resolute.WorkspaceRequest) (resolute.Workspace, error) {
	var out resolute.WorkspaceResponse
	err := c.do(ctx, http.MethodPatch, idPath("/api/v1/workspaces/%d", id), nil, req, &out)
	return out.Workspace, err
}

// AvailablePools lists the resource pools a workspace may use (GET
// /api/v1/workspaces/{id}/available-resource-pools).
func (c *Client) AvailablePools(ctx context.Context, id int64) ([]string, error) {
	var out resolute.AvailablePoolsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/workspaces/%d/available-resource-pools", id), nil, nil, &out)
	return out.ResourcePools, err
}

// NamespaceBindings returns a workspace's Kubernetes namespace by cluster
// name (GET /api/v1/workspaces/{id}/list-namespace-bindings).
func (c *Client) NamespaceBindings(ctx context.Context, id int64) (map[string]resolute.WorkspaceNamespaceBinding, error) {
	var out resolute.NamespaceBindingsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/workspaces/%d/list-namespace-bindings", id), nil, nil, &out)
	return out.NamespaceBindings, err
}

// SetNamespaceBinding binds a workspace to a Kubernetes namespace (POST
// /api/v1/workspaces/{id}/namespace-bindings).
func (c *Client) SetNamespaceBinding(ctx context.Context, id int64, namespace string) (map[string]resolute.WorkspaceNamespaceBinding, error) {
	var out resolute.NamespaceBindingsResponse
	req := resolute.SetNamespaceBindingsRequest{WorkspaceID: id,
		ClusterNamespaceMeta: map[string]resolute.WorkspaceNamespaceMeta{"": {Namespace: namespace}}}
	err := c.do(ctx, http.MethodPost, idPath("/api/v1/workspaces/%d/namespace-bindings", id), nil, req, &out)
	return out.NamespaceBindings, err
}

// DeleteNamespaceBinding removes a workspace's namespace (DELETE
// /api/v1/workspaces/{id}/namespace-bindings).
func (c *Client) DeleteNamespaceBinding(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/api/v1/workspaces/%d/namespace-bindings", id), nil, nil, nil)
}

// PoolBindings lists the workspaces a resource pool is bound to (GET
// /api/v1/resource-pools/{name}/workspace-bindings).
func (c *Client) PoolBindings(ctx context.Context, pool string) ([]resolute.PoolBinding, error) {
	var out resolute.PoolBindingsResponse
	err := c.do(ctx, http.MethodGet, poolBindingsPath(pool), nil, nil, &out)
	return out.Bindings, err
}

// BindPool binds a pool to workspaces by name (POST); UnbindPool unbinds
// them (DELETE); ReplacePoolBindings binds it to exactly them (PUT).
func (c *Client) BindPool(ctx context.Context, pool string, workspaces []string) error {
	return c.poolBindings(ctx, http.MethodPost, pool, workspaces)
}

// UnbindPool removes a pool's bindings to workspaces by name.
func (c *Client) UnbindPool(ctx context.Context, pool string, workspaces []string) error {
	return c.poolBindings(ctx, http.MethodDelete, pool, workspaces)
}

// ReplacePoolBindings binds a pool to exactly the workspaces named.
func (c *Client) ReplacePoolBindings(ctx context.Context, pool string, workspaces []string) error {
	return c.poolBindings(ctx, http.MethodPut, pool, workspaces)
}

func (c *Client) poolBindings(ctx context.Context, method, pool string, workspaces []string) error {
	req := resolute.PoolBindingsRequest{ResourcePoolName: pool, WorkspaceNames: workspaces}
	return c.do(ctx, method, poolBindingsPath(pool), nil, req, nil)
}

func poolBindingsPath(pool string) string {
	return "/api/v1/resource-pools/" + url.PathEscape(pool) + "/workspace-bindings"
}
