package control

import (
	"context"
	"log/slog"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Users adds and edits accounts, sets passwords, and opens and ends
// sessions. The cluster always keeps an active administrator, and a user
// who is deactivated or whose password changes loses their other sessions.
type Users struct {
	db          *db.DB
	logger      *slog.Logger
	minPassword int // characters
	// taskUIDBase is where unlinked users' task ids start; links stay below.
	taskUIDBase int
}

// MaxPasswordLen is the longest password bcrypt reads in full.
const MaxPasswordLen = 72

// DefaultMinPasswordLength is the fewest characters of a new password
// unless security.min_password_length says otherwise.
const DefaultMinPasswordLength = 8

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)

// Create adds a user with a password ("" for none, as Determined allows:
// they sign in with the empty password until one is set, like the built-in
// users): administrators only. A password given must be long enough.
func (s *Users) Create(ctx context.Context, a authz.Actor, spec resolute.UserSpec, password string) (resolute.User, error) {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return resolute.User{}, err
	}
	if !usernamePattern.MatchString(spec.Username) {
		return resolute.User{}, resolute.Errorf(resolute.EInvalid, "username: use 1-128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
	}
	if err := checkDisplayName(spec.DisplayName); err != nil {
		return resolute.User{}, err
	}
	if password != "" {
		if err := s.checkPassword(password); err != nil {
			return resolute.User{}, err
		}
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return resolute.User{}, err
	}
	u, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.User, error) {
		u, err := q.CreateUser(ctx, spec.Username, spec.DisplayName, hash, spec.Admin)
		if err != nil || spec.Active == nil || *spec.Active {
			return u, err
		}
		return q.UpdateUser(ctx, u.ID, u.DisplayName, u.Admin, false)
	})
	if err == nil {
		s.logger.Info("user created", "username", u.Username, "user_id", u.ID, "admin", u.Admin, "active", u.Active,
			"has_password", password != "", "by", a.Username())
	}
	return u, err
}

// Edit changes what req gives of a user: the display name (the user or an
// administrator), the admin and active flags and the linked agent user
// (administrators only; an empty one unlinks). It refuses to leave the
// cluster without an active administrator, and deactivating a user ends
// their sessions. A new link applies to tasks launched after it.
func (s *Users) Edit(ctx context.Context, a authz.Actor, id int64, req resolute.PatchUserRequest) (resolute.User, error) {
	if req.DisplayName != nil {
		if err := checkDisplayName(*req.DisplayName); err != nil {
			return resolute.User{}, err
		}
	}
	link := req.AgentUserGroup
	if link != nil && *link == (resolute.AgentUserGroup{}) {
		link = nil // unlink
	}
	var before resolute.User
	u, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.User, error) {
		// The administrators first, then the user, always in that order:
		// two edits that each remove an administrator then cannot both
		// count the other one, nor deadlock.
		if err := q.LockActiveAdmins(ctx); err != nil {
			return resolute.User{}, err
		}
		old, err := q.UserForUpdate(ctx, id)
		if err != nil {
			return resolute.User{}, err
		}
		if err := authz.Can(a, authz.ChangeUser, authz.UserAccount(old.User)); err != nil {
			return old.User, err
		}
		before = old.User
		u := old.User
		if req.DisplayName != nil {
			u.DisplayName = *req.DisplayName
		}
		if req.Admin != nil {
			u.Admin = *req.Admin
		}
		if req.Active != nil {
			u.Active = *req.Active
		}
		if u.Admin != old.Admin || u.Active != old.Active || req.AgentUserGroup != nil {
			if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
				return old.User, err
			}
		}
		if link != nil {
			if err := CheckAgentUserGroup(*link, s.taskUIDBase); err != nil {
				return old.User, err
			}
		}
		u, err = q.UpdateUser(ctx, id, u.DisplayName, u.Admin, u.Active)
		if err != nil {
			return u, err
		}
		if req.AgentUserGroup != nil {
			if err := q.SetAgentUserGroup(ctx, id, link); err != nil {
				return u, err
			}
		}
		g, linked, err := q.AgentUserGroup(ctx, id)
		if err != nil {
			return u, err
		}
		if linked {
			u.AgentUserGroup = &g
		}
		n, err := q.CountActiveAdmins(ctx)
		if err != nil {
			return u, err
		}
		if n == 0 {
			return u, resolute.Errorf(resolute.EConflict, "%s is the last active administrator", u.Username)
		}
		if !u.Active {
			if err := q.DeleteUserSessions(ctx, id); err != nil {
				return u, err
			}
		}
		return u, nil
	})
	if err == nil {
		s.logEdit(a, before, u)
	}
	if err == nil && req.AgentUserGroup != nil {
		s.logAgentLink(a, u, link)
	}
	return u, err
}

// TaskUser is what u's tasks run as: their linked agent user, or their
// default ids (task_uid_base + id).
func (s *Users) TaskUser(u resolute.User) (resolute.TaskUser, error) {
	return taskUserOf(s.taskUIDBase, u)
}

// logAgentLink says in the master's log who linked whom to what: which Unix
// user runs someone's tasks matters as much as who is an administrator.
func (s *Users) logAgentLink(a authz.Actor, u resolute.User, link *resolute.AgentUserGroup) {
	if link == nil {
		s.logger.Info("user unlinked from their agent user: their tasks run as their default ids",
			"username", u.Username, "task_uid", int64(s.taskUIDBase)+u.ID, "by", a.Username())
		return
	}
	s.logger.Info("user linked to an agent user: their tasks run as it", "username", u.Username,
		"agent_uid", link.UID, "agent_gid", link.GID, "agent_user", link.User, "agent_group", link.Group, "by", a.Username())
}

// checkDisplayName validates a display name, which may be empty: det
// prints it in other people's terminals, so no control characters.
func checkDisplayName(v string) error {
	if err := CheckLength("displayName", v, MaxNameLen); err != nil {
		return err
	}
	if resolute.HasControl(v, "") {
		return resolute.Errorf(resolute.EInvalid, "displayName: must not contain control characters")
	}
	return nil
}

// logEdit says in the master's log who changed what of whom.
func (s *Users) logEdit(a authz.Actor, before, after resolute.User) {
	attrs := []any{"username", after.Username, "user_id", after.ID, "by", a.Username()}
	changed := false
	if before.DisplayName != after.DisplayName {
		attrs, changed = append(attrs, "display_name", after.DisplayName, "was", before.DisplayName), true
	}
	if before.Admin != after.Admin {
		attrs, changed = append(attrs, "admin", after.Admin), true
	}
	if before.Active != after.Active {
		attrs, changed = append(attrs, "active", after.Active), true
	}
	if changed {
		s.logger.Info("user changed", attrs...)
	}
}

// SetPassword changes a user's password: users their own, giving their
// current password; administrators anyone's (their own too with the current
// one). Every other session of that user ends; session is the token the
// actor signed in with, which survives when they change their own.
func (s *Users) SetPassword(ctx context.Context, a authz.Actor, id int64, req resolute.SetPasswordRequest, session string) error {
	var username string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		u, err := q.UserForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if err := authz.Can(a, authz.ChangeUser, authz.UserAccount(u.User)); err != nil {
			return err
		}
		if err := s.checkPassword(req.Password); err != nil {
			return err
		}
		self := a.UserID() == id
		if self && !auth.CheckPassword(u.PasswordHash, req.OldPassword) {
			return resolute.Errorf(resolute.EInvalid, "oldPassword: is not your current password")
		}
		hash, err := auth.HashPassword(req.Password)
		if err != nil {
			return err
		}
		if err := q.SetPassword(ctx, id, hash); err != nil {
			return err
		}
		var keep []byte
		if self {
			keep = auth.HashToken(session)
		}
		username = u.Username
		return q.DeleteOtherSessions(ctx, id, keep)
	})
	if err == nil { // who set whose password, never the password
		s.logger.Info("user password set", "username", username, "user_id", id, "by", a.Username())
	}
	return err
}

// errBadLogin never says whether the user or the password was wrong.
var errBadLogin = resolute.Errorf(resolute.EUnauthorized, "invalid username or password")

// Login checks an active user's password and opens a session that ends at
// expires, returning its token. Anyone may try: the password is the
// permission. A wrong username or password, or a deactivated user, is
// EUnauthorized without saying which.
func (s *Users) Login(ctx context.Context, username, password string, expires time.Time) (string, resolute.User, error) {
	u, err := s.db.UserByUsername(ctx, username)
	switch {
	case resolute.ErrorCode(err) == resolute.ENotFound:
		auth.WasteTime(password) // an unknown user takes as long as a wrong password
		return "", resolute.User{}, errBadLogin
	case err != nil:
		return "", resolute.User{}, err
	case !u.Active || !auth.CheckPassword(u.PasswordHash, password):
		return "", resolute.User{}, errBadLogin
	}
	token, hash := auth.NewToken()
	if err := s.db.CreateSession(ctx, u.ID, hash, expires); err != nil {
		return "", resolute.User{}, err
	}
	s.logger.Info("user logged in", "user", u.Username)
	return token, u.User, nil
}

// Logout ends the session of token: holding the token is the permission.
func (s *Users) Logout(ctx context.Context, token string) error {
	return s.db.DeleteSession(ctx, auth.HashToken(token))
}

// checkPassword checks a new password's length: at least the configured
// number of characters (so never empty: a password once set cannot be
// removed), at most what bcrypt reads.
func (s *Users) checkPassword(p string) error {
	if n := utf8.RuneCountInString(p); n < s.minPassword {
		return resolute.Errorf(resolute.EInvalid, "password: must be at least %d characters (got %d)", s.minPassword, n)
	}
	if len(p) > MaxPasswordLen {
		return resolute.Errorf(resolute.EInvalid, "password: must be at most %d bytes", MaxPasswordLen)
	}
	return nil
}
