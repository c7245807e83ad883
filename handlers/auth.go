package handlers

import (
	"context"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/views"
)

// errBadLogin never says whether the user or the password was wrong.
var errBadLogin = resolute.Errorf(resolute.EUnauthorized, "invalid username or password")

// login checks credentials under the failed-login throttle and opens a
// session, returning its token.
func (s *Server) login(ctx context.Context, r *http.Request, username, password string) (string, resolute.User, time.Time, error) {
	keys := []string{"user:" + username, "addr:" + clientAddr(r)}
	for _, k := range keys {
		if wait := s.throttle.Wait(k); wait > 0 {
			return "", resolute.User{}, time.Time{}, resolute.Errorf(resolute.ETooMany,
				"too many failed logins; try again in %d s", int(math.Ceil(wait.Seconds())))
		}
	}
	u, err := s.db.UserByUsername(ctx, username)
	if resolute.ErrorCode(err) == resolute.ENotFound || (err == nil && (!u.Active || !auth.CheckPassword(u.PasswordHash, password))) {
		if err != nil {
			auth.WasteTime(password) // an unknown user takes as long as a wrong password
		}
		for _, k := range keys {
			s.throttle.Fail(k)
		}
		return "", resolute.User{}, time.Time{}, errBadLogin
	} else if err != nil {
		return "", resolute.User{}, time.Time{}, err
	}
	for _, k := range keys {
		s.throttle.Succeed(k)
	}
	token, hash := auth.NewToken()
	expires := s.now().Add(s.cfg.SessionLifetime)
	if err := s.db.CreateSession(ctx, u.ID, hash, expires); err != nil {
		return "", resolute.User{}, time.Time{}, err
	}
	s.logger.Info("user logged in", "user", u.Username)
	return token, u.User, expires, nil
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// handleLoginPage serves GET /login.
func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := userFrom(r); ok {
		http.Redirect(w, r, safeRedirect(r.URL.Query().Get("redirect")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, views.LoginPage(views.Login{Asset: s.assets.URL, Redirect: r.URL.Query().Get("redirect")}))
}

// handleLoginForm serves POST /login: a session cookie and a redirect, or
// the form again with the error.
func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	username, target := strings.TrimSpace(r.PostFormValue("username")), r.PostFormValue("redirect")
	token, _, expires, err := s.login(r.Context(), r, username, r.PostFormValue("password"))
	if err != nil {
		code := resolute.ErrorCode(err)
		if code != resolute.EUnauthorized && code != resolute.ETooMany {
			s.error(w, r, err)
			return
		}
		s.render(w, r, statusOf(code), views.LoginPage(views.Login{Asset: s.assets.URL, Username: username, Redirect: target, Error: resolute.ErrorMessage(err)}))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.cfg.SecureCookies})
	http.Redirect(w, r, safeRedirect(target), http.StatusSeeOther)
}

// safeRedirect keeps redirects on this site.
func safeRedirect(target string) string {
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.HasPrefix(target, "/\\") {
		return "/dashboard"
	}
	return target
}

// handleLogoutForm serves POST /logout: the session ends, the cookie goes.
func (s *Server) handleLogoutForm(w http.ResponseWriter, r *http.Request) {
	if err := s.db.DeleteSession(r.Context(), auth.HashToken(tokenFrom(r))); err != nil {
		s.error(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.cfg.SecureCookies})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// handleAPILogin serves POST /api/v1/auth/login.
func (s *Server) handleAPILogin(w http.ResponseWriter, r *http.Request) {
	var req resolute.LoginRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if req.Username == "" {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "username: must not be empty"))
		return
	}
	if req.IsHashed {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "isHashed: Resolute accepts only plain passwords over HTTPS or loopback; send isHashed false"))
		return
	}
	token, u, _, err := s.login(r.Context(), r, req.Username, req.Password)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.LoginResponse{Token: token, User: u})
}

// handleAPILogout serves POST /api/v1/auth/logout: the token stops working.
func (s *Server) handleAPILogout(w http.ResponseWriter, r *http.Request) {
	if err := s.db.DeleteSession(r.Context(), auth.HashToken(tokenFrom(r))); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIMe serves GET /api/v1/me and /api/v1/auth/user.
func (s *Server) handleAPIMe(w http.ResponseWriter, r *http.Request) {
	u, _ := userFrom(r)
	writeJSON(w, http.StatusOK, resolute.UserResponse{User: u})
}

// passwordMessage checks a new password's length.
func passwordMessage(p string) error {
	if len(p) > 72 {
		return resolute.Errorf(resolute.EInvalid, "password: must be at most 72 bytes")
	}
	return nil
}
