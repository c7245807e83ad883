package db

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// UserWithHash is a user and the hash of their password, for logins only.
type UserWithHash struct {
	resolute.User
	PasswordHash string
}

// User returns the user with id.
func (db *DB) User(ctx context.Context, id int64) (resolute.User, error) {
	u, err := db.q.GetUser(ctx, id)
	return toUser(u), translate(err, "user %d", id)
}

// UserByUsername returns the user called name, with the password hash.
func (db *DB) UserByUsername(ctx context.Context, name string) (UserWithHash, error) {
	u, err := db.q.GetUserByUsername(ctx, name)
	return UserWithHash{User: toUser(u), PasswordHash: u.PasswordHash}, translate(err, "user %q", name)
}

// Users lists every user by name.
func (db *DB) Users(ctx context.Context) ([]resolute.User, error) {
	rows, err := db.q.ListUsers(ctx)
	if err != nil {
		return nil, translate(err, "users")
	}
	users := make([]resolute.User, len(rows))
	for i, u := range rows {
		users[i] = toUser(u)
	}
	return users, nil
}

// CreateUser adds a user; passwordHash "" means no password.
func (db *DB) CreateUser(ctx context.Context, name, displayName, passwordHash string, admin bool) (resolute.User, error) {
	u, err := db.q.CreateUser(ctx, gen.CreateUserParams{Username: name, DisplayName: displayName, PasswordHash: passwordHash, Admin: admin})
	return toUser(u), translate(err, "user %q", name)
}

// UpdateUser sets a user's display name, admin flag and active flag. It
// refuses to leave the cluster without an active administrator, and
// deactivating a user ends their sessions.
func (db *DB) UpdateUser(ctx context.Context, id int64, displayName string, admin, active bool) (resolute.User, error) {
	var out resolute.User
	err := db.inTx(ctx, func(q *gen.Queries) error {
		u, err := q.UpdateUser(ctx, gen.UpdateUserParams{ID: id, DisplayName: displayName, Admin: admin, Active: active})
		if err != nil {
			return translate(err, "user %d", id)
		}
		n, err := q.CountActiveAdmins(ctx)
		if err != nil {
			return translate(err, "administrators")
		}
		if n == 0 {
			return resolute.Errorf(resolute.EConflict, "%s is the last active administrator", u.Username)
		}
		if !active {
			if err := q.DeleteUserSessions(ctx, id); err != nil {
				return translate(err, "sessions of user %d", id)
			}
		}
		out = toUser(u)
		return nil
	})
	return out, err
}

// SetPassword replaces a user's password hash and ends every session of that
// user except the one whose token hash is keep (nil keeps none).
func (db *DB) SetPassword(ctx context.Context, id int64, passwordHash string, keep []byte) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := q.SetUserPassword(ctx, gen.SetUserPasswordParams{ID: id, PasswordHash: passwordHash}); err != nil {
			return translate(err, "user %d", id)
		}
		if keep == nil {
			keep = []byte{}
		}
		return translate(q.DeleteOtherSessions(ctx, gen.DeleteOtherSessionsParams{UserID: id, TokenHash: keep}), "sessions of user %d", id)
	})
}

func toUser(u gen.User) resolute.User {
	return resolute.User{
		ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Admin: u.Admin,
		Active: u.Active, HasPassword: u.PasswordHash != "", CreatedAt: u.CreatedAt,
	}
}

// CreateSession stores a session for userID under the token's hash.
func (db *DB) CreateSession(ctx context.Context, userID int64, tokenHash []byte, expires time.Time) error {
	_, err := db.q.CreateSession(ctx, gen.CreateSessionParams{UserID: userID, TokenHash: tokenHash, ExpiresAt: expires})
	return translate(err, "session")
}

// SessionUser returns the active user of the live session with tokenHash.
func (db *DB) SessionUser(ctx context.Context, tokenHash []byte) (resolute.User, resolute.Session, error) {
	row, err := db.q.GetSessionUser(ctx, tokenHash)
	if err != nil {
		return resolute.User{}, resolute.Session{}, translate(err, "session")
	}
	s := resolute.Session{ID: row.Session.ID, UserID: row.Session.UserID, ExpiresAt: row.Session.ExpiresAt}
	return toUser(row.User), s, nil
}

// DeleteSession ends the session with tokenHash (logout).
func (db *DB) DeleteSession(ctx context.Context, tokenHash []byte) error {
	return translate(db.q.DeleteSession(ctx, tokenHash), "session")
}

// DeleteExpiredSessions removes sessions past their expiry.
func (db *DB) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	n, err := db.q.DeleteExpiredSessions(ctx)
	return n, translate(err, "expired sessions")
}
