package handlers

import (
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

// login opens a session under the failed-login throttle, which counts
// failures per username and client address together (with a ceiling per
// address), returning its token.
func (s *Server) login(r *http.Request, username, password string) (string, resolute.User, time.Time, error) {
	addr := clientAddr(r)
	if wait := s.throttle.Wait(username, addr); wait > 0 {
		return "", resolute.User{}, time.Time{}, resolute.Errorf(resolute.ETooMany,
			"too many failed logins; try again in %d s", int(math.Ceil(wait.Seconds())))
	}
	expires := s.now().Add(s.cfg.SessionLifetime)
	token, u, err := s.svc.Users.Login(r.Context(), username, password, expires)
	if err != nil {
		if resolute.ErrorCode(err) == resolute.EUnauthorized {
			s.throttle.Fail(username, addr)
		}
		return "", resolute.User{}, time.Time{}, err
	}
	s.throttle.Succeed(username, addr)
	return token, u, expires, nil
}

// handleLoginPage serves GET /login.
func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := userFrom(r); ok {
		http.Redirect(w, r, safeRedirect(r.URL.Query().Get("redirect")), http.StatusSeeOther)
		return
	}
	login := views.Login{Asset: s.assets.URL, Redirect: r.URL.Query().Get("redirect")}
	if sessionAmbiguous(r) {
		login.Error = sentence(ambiguousSession)
	}
	s.render(w, r, http.StatusOK, views.LoginPage(login))
}

// handleLoginForm serves POST /login: a session cookie and a redirect, or
// the form again with the error.
func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	username, target := strings.TrimSpace(r.PostFormValue("username")), r.PostFormValue("redirect")
	if sessionAmbiguous(r) { // a new session would be as ambiguous
		s.render(w, r, http.StatusConflict, views.LoginPage(views.Login{Asset: s.assets.URL, Username: username, Redirect: target,
			Error: sentence(ambiguousSession)}))
		return
	}
	token, _, expires, err := s.login(r, username, r.PostFormValue("password"))
	if err != nil {
		code := resolute.ErrorCode(err)
		if code != resolute.EUnauthorized && code != resolute.ETooMany {
			s.error(w, r, err)
			return
		}
		s.render(w, r, statusOf(code), views.LoginPage(views.Login{Asset: s.assets.URL, Username: username, Redirect: target, Error: resolute.ErrorMessage(err)}))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.sessionCookieName(r), Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(r)})
	http.Redirect(w, r, safeRedirect(target), http.StatusSeeOther)
}

// safeRedirect keeps redirects on this site: target when it is a local
// path (resolute.LocalPath), else the dashboard.
func safeRedirect(target string) string {
	if !resolute.LocalPath(target) {
		return "/dashboard"
	}
	return target
}

// handleLogoutForm serves POST /logout: the session ends, the cookie goes.
func (s *Server) handleLogoutForm(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Users.Logout(r.Context(), tokenFrom(r)); err != nil {
		s.error(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.sessionCookieName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(r)})
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
	token, u, _, err := s.login(r, req.Username, req.Password)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.LoginResponse{Token: token, User: u})
}

// handleAPILogout serves POST /api/v1/auth/logout: the token stops working.
func (s *Server) handleAPILogout(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Users.Logout(r.Context(), tokenFrom(r)); err != nil {
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
