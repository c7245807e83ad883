package handlers

import (
	"context"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
)

// CookieName is the session cookie, as Determined names it.
const CookieName = "auth"

type ctxKey int

const (
	userKey ctxKey = iota
	tokenKey
)

// authenticate finds the session behind a bearer token or the session cookie
// and puts its user in the request context. It rejects nothing: the require*
// middleware decide.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearerToken(r)
		if token == "" {
			if c, err := r.Cookie(CookieName); err == nil {
				token = c.Value
			}
		}
		if token != "" {
			u, _, err := s.db.SessionUser(r.Context(), auth.HashToken(token))
			if err == nil {
				ctx := context.WithValue(r.Context(), userKey, u)
				ctx = context.WithValue(ctx, tokenKey, token)
				r = r.WithContext(ctx)
			} else if resolute.ErrorCode(err) != resolute.ENotFound {
				s.error(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// userFrom returns the signed-in user of a request.
func userFrom(r *http.Request) (resolute.User, bool) {
	u, ok := r.Context().Value(userKey).(resolute.User)
	return u, ok
}

// tokenFrom returns the session token of a request.
func tokenFrom(r *http.Request) string {
	t, _ := r.Context().Value(tokenKey).(string)
	return t
}

// requirePageUser sends people who are not signed in to the login page,
// remembering where they were going.
func (s *Server) requirePageUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := userFrom(r); !ok {
			target := "/login"
			if r.Method == http.MethodGet && r.URL.Path != "/" {
				target += "?redirect=" + url.QueryEscape(r.URL.RequestURI())
			}
			if r.Header.Get("HX-Request") != "" {
				w.Header().Set("HX-Redirect", target)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAPIUser answers 401 to API calls without a valid session.
func (s *Server) requireAPIUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := userFrom(r); !ok {
			s.error(w, r, resolute.Errorf(resolute.EUnauthorized, "not signed in: log in with `det user login` or POST /api/v1/auth/login"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAdmin answers 403 to users who are not administrators.
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _ := userFrom(r); !u.Admin {
			s.error(w, r, resolute.Errorf(resolute.EForbidden, "only administrators may do this"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitBodies bounds request bodies; reading past the limit fails and the
// handler answers 413.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxBodyBytes {
			s.error(w, r, resolute.Errorf(resolute.ETooLarge, "request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic in a handler into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.Error("panic in handler", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				s.error(w, r, resolute.Errorf(resolute.EInternal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
