package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// Users lists every user (GET /api/v1/users).
func (c *Client) Users(ctx context.Context) ([]resolute.User, error) {
	var out resolute.UsersResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/users", nil, nil, &out)
	return out.Users, err
}

// User returns one user by id (GET /api/v1/users/{id}).
func (c *Client) User(ctx context.Context, id int64) (resolute.User, error) {
	var out resolute.UserResponse
	err := c.do(ctx, http.MethodGet, idPath("/api/v1/users/%d", id), nil, nil, &out)
	return out.User, err
}

// UserByName returns one user by username
// (GET /api/v1/users/{username}/by-username).
func (c *Client) UserByName(ctx context.Context, username string) (resolute.User, error) {
	var out resolute.UserResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/users/"+url.PathEscape(username)+"/by-username", nil, nil, &out)
	return out.User, err
}

// CreateUser adds a user (POST /api/v1/users, administrators). An empty
// password is allowed.
func (c *Client) CreateUser(ctx context.Context, spec resolute.UserSpec, password string) (resolute.User, error) {
	var out resolute.UserResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/users", nil,
		resolute.CreateUserRequest{User: spec, Password: password}, &out)
	return out.User, err
}

// PatchUser changes the fields of req that are set
// (PATCH /api/v1/users/{id}, administrators).
func (c *Client) PatchUser(ctx context.Context, id int64, req resolute.PatchUserRequest) (resolute.User, error) {
	var out resolute.UserResponse
	err := c.do(ctx, http.MethodPatch, idPath("/api/v1/users/%d", id), nil, req, &out)
	return out.User, err
}

// SetPassword sets a user's password (POST /api/v1/users/{id}/password).
// Users changing their own give OldPassword; administrators may set anyone's.
func (c *Client) SetPassword(ctx context.Context, id int64, req resolute.SetPasswordRequest) error {
	return c.do(ctx, http.MethodPost, idPath("/api/v1/users/%d/password", id), nil, req, nil)
}
