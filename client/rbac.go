package client

import (
	"context"
	"net/http"

	"github.com/resolute-ml/resolute"
)

// Groups lists user groups (POST /api/v1/groups/search): those of userID
// when not 0, the one called name when not "".
func (c *Client) Groups(ctx context.Context, userID int64, name string) ([]resolute.GroupSearchResult, error) {
	var out resolute.GroupsResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/groups/search", nil, resolute.GroupSearchRequest{UserID: userID, Name: name, Limit: 500}, &out)
	return out.Groups, err
}

// GroupByName returns the group called name with its members, or a
// not_found error.
func (c *Client) GroupByName(ctx context.Context, name string) (resolute.GroupDetails, error) {
	list, err := c.Groups(ctx, 0, name)
	if err != nil {
		return resolute.GroupDetails{}, err
	}
	if len(list) == 0 {
		return resolute.GroupDetails{}, resolute.Errorf(resolute.ENotFound, "user group %q not found", name)
	}
	return c.Group(ctx, list[0].Group.ID)
}

// Group returns a group and its members (GET /api/v1/groups/{groupId}).
func (c *Client) Group(ctx context.Context, id int64) (resolute.GroupDetails, error) {
	var out resolute.GroupResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/groups/%d", id), nil, nil, &out)
	return out.Group, err
}

// CreateGroup adds a group with the users addUsers (POST /api/v1/groups).
func (c *Client) CreateGroup(ctx context.Context, name string, addUsers []int64) (resolute.GroupDetails, error) {
	var out resolute.GroupResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/groups", nil, resolute.GroupRequest{Name: name, AddUsers: addUsers}, &out)
	return out.Group, err
}

// UpdateGroup renames a group and changes its members (PUT
// /api/v1/groups/{groupId}).
func (c *Client) UpdateGroup(ctx context.Context, id int64, req resolute.GroupRequest) (resolute.GroupDetails, error) {
	var out resolute.GroupResponse
	err := c.do(ctx, http.MethodPut, idPath("/api/v1/groups/%d", id), nil, req, &out)
	return out.Group, err
}

// DeleteGroup deletes a group (DELETE /api/v1/groups/{groupId}).
func (c *Client) DeleteGroup(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/api/v1/groups/%d", id), nil, nil, nil)
}

// Roles lists the built-in roles (POST /api/v1/roles/search).
func (c *Client) Roles(ctx context.Context) ([]resolute.Role, error) {
	var out resolute.RolesResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/roles/search", nil, struct {
		Limit int `json:"limit"`
	}{500}, &out)
	return out.Roles, err
}

// RolesByID returns roles with their assignments (POST
// /api/v1/roles/search/by-ids).
func (c *Client) RolesByID(ctx context.Context, ids ...int) ([]resolute.RoleWithAssignments, error) {
	var out resolute.RolesWithAssignmentsResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/roles/search/by-ids", nil, resolute.RolesByIDRequest{RoleIDs: ids}, &out)
	return out.Roles, err
}

// RolesOfUser returns the roles assigned to a user themselves (GET
// /api/v1/roles/search/by-user/{userId}).
func (c *Client) RolesOfUser(ctx context.Context, id int64) ([]resolute.RoleWithAssignments, error) {
	var out resolute.RolesWithAssignmentsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/roles/search/by-user/%d", id), nil, nil, &out)
	return out.Roles, err
}

// RolesOfGroup returns the roles assigned to a group (GET
// /api/v1/roles/search/by-group/{groupId}).
func (c *Client) RolesOfGroup(ctx context.Context, id int64) ([]resolute.RoleWithAssignments, error) {
	var out resolute.RolesWithAssignmentsResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/roles/search/by-group/%d", id), nil, nil, &out)
	return out.Roles, err
}

// AssignRoles grants role assignments (POST /api/v1/roles/add-assignments).
func (c *Client) AssignRoles(ctx context.Context, req resolute.AssignRolesRequest) error {
	return c.do(ctx, http.MethodPost, "/api/v1/roles/add-assignments", nil, req, nil)
}

// UnassignRoles revokes role assignments (POST
// /api/v1/roles/remove-assignments).
func (c *Client) UnassignRoles(ctx context.Context, req resolute.AssignRolesRequest) error {
	return c.do(ctx, http.MethodPost, "/api/v1/roles/remove-assignments", nil, req, nil)
}

// PermissionsSummary returns the caller's roles and where they hold (GET
// /api/v1/permissions/summary).
func (c *Client) PermissionsSummary(ctx context.Context) (resolute.PermissionsSummary, error) {
	var out resolute.PermissionsSummary
	err := c.do(ctx, http.MethodGet, "/api/v1/permissions/summary", nil, nil, &out)
	return out, err
}
