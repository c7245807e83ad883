package db

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// UserWithHash is a user and the hash of their password, for logins only.
type UserWithHash struct {
	resolute.User
	PasswordHash string
}

// User returns the user with id, with their linked agent user.
func (q *Queries) User(ctx context.Context, id int64) (resolute.User, error) {
	row, err := q.q.GetUser(ctx, id)
	if err != nil {
		return resolute.User{}, translate(err, "user %d", id)
	}
	u := toUser(row)
	g, linked, err := q.AgentUserGroup(ctx, id)
	if linked {
		u.AgentUserGroup = &g
	}
	return u, err
}

// UserByUsername returns the user called name, with the password hash.
func (q *Queries) UserByUsername(ctx context.Context, name string) (UserWithHash, error) {
	u, err := q.q.GetUserByUsername(ctx, name)
	return UserWithHash{User: toUser(u), PasswordHash: u.PasswordHash}, translate(err, "user %q", name)
}

// Users lists every user by name, with their linked agent users.
func (q *Queries) Users(ctx context.Context) ([]resolute.User, error) {
	rows, err := q.q.ListUsers(ctx)
	if err != nil {
		return nil, translate(err, "users")
	}
	links, err := q.q.ListAgentUserGroups(ctx)
	if err != nil {
		return nil, translate(err, "agent users")
	}
	byUser := make(map[int64]*resolute.AgentUserGroup, len(links))
	for _, g := range links {
		byUser[g.UserID] = toAgentUserGroup(g)
	}
	users := make([]resolute.User, len(rows))
	for i, u := range rows {
		users[i] = toUser(u)
		users[i].AgentUserGroup = byUser[u.ID]
	}
	return users, nil
}

// AgentUserGroup returns the Unix user and group a user's tasks run as;
// linked is false when no administrator linked one (the default applies).
func (q *Queries) AgentUserGroup(ctx context.Context, userID int64) (g resolute.AgentUserGroup, linked bool, err error) {
	row, err := q.q.GetAgentUserGroup(ctx, userID)
	if errors.Is(err, pgx.ErrNoRows) {
		return g, false, nil
	}
	if err != nil {
		return g, false, translate(err, "agent user of user %d", userID)
	}
	return *toAgentUserGroup(row), true, nil
}

// SetAgentUserGroup links a user to the Unix user and group g, or removes
// the link when g is nil.
func (q *Queries) SetAgentUserGroup(ctx context.Context, userID int64, g *resolute.AgentUserGroup) error {
	if g == nil {
		return translate(q.q.DeleteAgentUserGroup(ctx, userID), "agent user of user %d", userID)
	}
	return translate(q.q.SetAgentUserGroup(ctx, gen.SetAgentUserGroupParams{UserID: userID,
		AgentUid: int64(g.UID), AgentGid: int64(g.GID), AgentUser: g.User, AgentGroup: g.Group}), "agent user of user %d", userID)
}

func toAgentUserGroup(g gen.AgentUserGroup) *resolute.AgentUserGroup {
	return &resolute.AgentUserGroup{UID: int(g.AgentUid), GID: int(g.AgentGid), User: g.AgentUser, Group: g.AgentGroup}
}

// CreateUser adds a user; passwordHash "" means no password.
func (q *Queries) CreateUser(ctx context.Context, name, displayName, passwordHash string, admin bool) (resolute.User, error) {
	u, err := q.q.CreateUser(ctx, gen.CreateUserParams{Username: name, DisplayName: displayName, PasswordHash: passwordHash, Admin: admin})
	return toUser(u), translate(err, "user %q", name)
}

// UserForUpdate locks the user with id until the transaction ends and
// returns it with the password hash.
func (q *Queries) UserForUpdate(ctx context.Context, id int64) (UserWithHash, error) {
	if _, err := q.q.LockUser(ctx, id); err != nil {
		return UserWithHash{}, translate(err, "user %d", id)
	}
	u, err := q.q.GetUser(ctx, id)
	return UserWithHash{User: toUser(u), PasswordHash: u.PasswordHash}, translate(err, "user %d", id)
}

// LockActiveAdmins locks the active administrators until the transaction
// ends.
func (q *Queries) LockActiveAdmins(ctx context.Context) error {
	_, err := q.q.LockActiveAdmins(ctx)
	return translate(err, "administrators")
}

// CountActiveAdmins counts the active administrators.
func (q *Queries) CountActiveAdmins(ctx context.Context) (int64, error) {
	n, err := q.q.CountActiveAdmins(ctx)
	return n, translate(err, "administrators")
}

// UpdateUser sets a user's display name, admin flag and active flag.
func (q *Queries) UpdateUser(ctx context.Context, id int64, displayName string, admin, active bool) (resolute.User, error) {
	u, err := q.q.UpdateUser(ctx, gen.UpdateUserParams{ID: id, DisplayName: displayName, Admin: admin, Active: active})
	return toUser(u), translate(err, "user %d", id)
}

// SetPassword replaces a user's password hash.
func (q *Queries) SetPassword(ctx context.Context, id int64, passwordHash string) error {
	return translate(q.q.SetUserPassword(ctx, gen.SetUserPasswordParams{ID: id, PasswordHash: passwordHash}), "user %d", id)
}

func toUser(u gen.User) resolute.User {
	return resolute.User{
		ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Admin: u.Admin,
		Active: u.Active, HasPassword: u.PasswordHash != "", CreatedAt: u.CreatedAt,
	}
}

// CreateSession stores a session for userID under the token's hash.
func (q *Queries) CreateSession(ctx context.Context, userID int64, tokenHash []byte, expires time.Time) error {
	_, err := q.q.CreateSession(ctx, gen.CreateSessionParams{UserID: userID, TokenHash: tokenHash, ExpiresAt: expires})
	return translate(err, "session")
}

// SessionUser returns the active user of the live session with tokenHash.
func (q *Queries) SessionUser(ctx context.Context, tokenHash []byte) (resolute.User, resolute.Session, error) {
	row, err := q.q.GetSessionUser(ctx, tokenHash)
	if err != nil {
		return resolute.User{}, resolute.Session{}, translate(err, "session")
	}
	s := resolute.Session{ID: row.Session.ID, UserID: row.Session.UserID, ExpiresAt: row.Session.ExpiresAt}
	return toUser(row.User), s, nil
}

// DeleteSession ends the session with tokenHash (logout).
func (q *Queries) DeleteSession(ctx context.Context, tokenHash []byte) error {
	return translate(q.q.DeleteSession(ctx, tokenHash), "session")
}

// DeleteUserSessions ends every session of a user.
func (q *Queries) DeleteUserSessions(ctx context.Context, userID int64) error {
	return translate(q.q.DeleteUserSessions(ctx, userID), "sessions of user %d", userID)
}

// DeleteOtherSessions ends every session of a user except the one whose
// token hash is keep (nil keeps none).
func (q *Queries) DeleteOtherSessions(ctx context.Context, userID int64, keep []byte) error {
	if keep == nil {
		keep = []byte{}
	}
	return translate(q.q.DeleteOtherSessions(ctx, gen.DeleteOtherSessionsParams{UserID: userID, TokenHash: keep}), "sessions of user %d", userID)
}

// DeleteExpiredSessions removes sessions past their expiry.
func (q *Queries) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	n, err := q.q.DeleteExpiredSessions(ctx)
	return n, translate(err, "expired sessions")
}
