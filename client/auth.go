package client

import (
	"context"
	"net/http"

	"github.com/resolute-ml/resolute"
)

// Login opens a session with POST /api/v1/auth/login and returns its token
// and user. The client itself stays as it was: make a new one WithToken.
func (c *Client) Login(ctx context.Context, username, password string) (resolute.LoginResponse, error) {
	var out resolute.LoginResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/auth/login", nil,
		resolute.LoginRequest{Username: username, Password: password}, &out)
	return out, err
}

// Logout ends the client's session with POST /api/v1/auth/logout.
func (c *Client) Logout(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/api/v1/auth/logout", nil, nil, nil)
}

// Me returns the signed-in user (GET /api/v1/me).
func (c *Client) Me(ctx context.Context) (resolute.User, error) {
	var out resolute.UserResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/me", nil, nil, &out)
	return out.User, err
}
