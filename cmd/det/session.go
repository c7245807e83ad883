package main

import (
	"context"
	"fmt"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// session is a logged-in client and whose session it is.
type session struct {
	*client.Client
	username string // "" when the token came from DET_USER_TOKEN
}

// notLoggedIn is the error of commands that need a session and have none.
func (a *app) notLoggedIn(user string) error {
	if user != "" && user != resolute.DeterminedUsername {
		return fmt.Errorf("not logged in to %s as %s: run `det user login %s`", a.master, user, user)
	}
	return fmt.Errorf("not logged in to %s: run `det user login`", a.master)
}

// sessionUser is the user whose session a command uses: -u, then DET_USER,
// then the last user to log in to this master, then determined.
func (a *app) sessionUser(store *tokenStore) (user string, named bool) {
	for _, u := range []string{a.userFlag, a.getenv("DET_USER")} {
		if u != "" {
			return u, true
		}
	}
	if u := store.activeUser(a.master); u != "" {
		return u, false
	}
	return resolute.DeterminedUsername, false
}

// login returns a session for commands that need one, as Determined's CLI
// finds it:
//  1. DET_USER_TOKEN, used as it is;
//  2. the stored token of the session user, if the master still takes it;
//  3. a new login with DET_PASS, or as determined with the empty password
//     (the default of a new cluster) when no user was named, or with a
//     password typed at the terminal.
//
// A new token is stored but does not change the active user.
func (a *app) login(ctx context.Context) (*session, error) {
	if t := a.getenv("DET_USER_TOKEN"); t != "" {
		return &session{Client: a.withToken(t)}, nil
	}
	store, err := loadTokens(a.getenv)
	if err != nil {
		return nil, err
	}
	user, named := a.sessionUser(store)
	if t := store.token(a.master, user); t != "" {
		c := a.withToken(t)
		_, err := c.Me(ctx)
		if err == nil {
			return &session{Client: c, username: user}, nil
		} else if resolute.ErrorCode(err) != resolute.EUnauthorized {
			return nil, err
		}
		// The session expired or was ended elsewhere: forget it, as Determined does.
		store.drop(a.master, user)
		if err := store.save(); err != nil {
			return nil, err
		}
	}
	var password string
	fallback := false
	switch {
	case a.getenv("DET_PASS") != "":
		password = a.getenv("DET_PASS")
	case user == resolute.DeterminedUsername && !named:
		fallback = true
	case a.terminal():
		if password, err = a.secret(fmt.Sprintf("Password for user '%s': ", user)); err != nil {
			return nil, err
		}
	default:
		return nil, a.notLoggedIn(user)
	}
	resp, err := a.anonymous().Login(ctx, user, password)
	if fallback && resolute.ErrorCode(err) == resolute.EUnauthorized {
		return nil, a.notLoggedIn("")
	} else if err != nil {
		return nil, err
	}
	store.setToken(a.master, user, resp.Token, false)
	if err := store.save(); err != nil {
		return nil, err
	}
	return &session{Client: a.withToken(resp.Token), username: user}, nil
}

// loginWorkspace logs in (login) and finds the workspace named name: how
// each command about one workspace begins.
func (a *app) loginWorkspace(ctx context.Context, name string) (*session, resolute.Workspace, error) {
	s, err := a.login(ctx)
	if err != nil {
		return nil, resolute.Workspace{}, err
	}
	ws, err := s.WorkspaceByName(ctx, name)
	if err != nil {
		return nil, resolute.Workspace{}, err
	}
	return s, ws, nil
}

// loginWithID reads the id of the object a command is about (what names
// it in the usage error), then logs in (login): a bad id is told before
// anything is asked of the master.
func (a *app) loginWithID(ctx context.Context, what, arg string) (*session, int64, error) {
	id, err := parseID(what, arg)
	if err != nil {
		return nil, 0, err
	}
	s, err := a.login(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s, id, nil
}
