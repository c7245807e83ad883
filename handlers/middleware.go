package handlers

import (
	"context"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// CookieName is the session cookie, as Determined names it, over plain
// HTTP.
const CookieName = "auth"

// SecureCookieName is the session cookie over HTTPS. Browsers accept a
// __Host- cookie only from this very host, Secure, for Path=/ and without a
// Domain, so a page on another host of the same domain (a task's, on the
// task origin) can neither set one nor shadow it with one of a longer path.
const SecureCookieName = "__Host-auth"

// ambiguousSession is what authenticate notes when a request carries more
// than one session cookie.
const ambiguousSession = "your browser sends this site more than one session cookie, " +
	"which a page of another host of this domain can cause; you are not signed in until they are gone: " +
	"clear this site's cookies in the browser (and serve tasks from a domain of their own, see tasks_url)"

type ctxKey int

const (
	userKey ctxKey = iota
	tokenKey
	allocationKey
	allocationActorKey
	liveSeqKey
	ambiguousKey
	userActorKey
)

// AllocationTokenHeader carries a task's allocation token, as Determined's
// harness sends it.
const AllocationTokenHeader = "Grpc-Metadata-x-allocation-token"

// authenticate finds the session behind a bearer token or the session cookie
// and puts its user in the request context. It rejects nothing: the require*
// middleware decide.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get(AllocationTokenHeader); h != "" {
			tok := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(h, "Bearer "), "bearer "))
			a, experimentID, err := s.db.AllocationByToken(r.Context(), auth.HashToken(tok))
			if err == nil && a.State == resolute.AllocationRunning {
				actor := authz.Allocation(a)
				if experimentID != 0 { // a trial's: it may read its experiment too
					actor = authz.TrialAllocation(a, experimentID)
				}
				ctx := context.WithValue(r.Context(), allocationKey, a)
				r = r.WithContext(context.WithValue(ctx, allocationActorKey, actor))
			} else if err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
				s.error(w, r, err)
				return
			}
		}
		token := bearerToken(r)
		if token == "" {
			var ambiguous bool
			if token, ambiguous = s.sessionCookie(r); ambiguous {
				r = r.WithContext(context.WithValue(r.Context(), ambiguousKey, true))
			}
		}
		if token != "" {
			u, _, err := s.db.SessionUser(r.Context(), auth.HashToken(token))
			var actor authz.Actor
			if err == nil {
				// Under RBAC the user's roles, read once per request.
				actor, err = s.svc.Roles.ActorOf(r.Context(), u)
			}
			if err == nil {
				ctx := context.WithValue(r.Context(), userKey, u)
				ctx = context.WithValue(ctx, tokenKey, token)
				ctx = context.WithValue(ctx, userActorKey, actor)
				r = r.WithContext(ctx)
			} else if resolute.ErrorCode(err) != resolute.ENotFound {
				s.error(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sessionCookieName is the session cookie's name in answer to r:
// SecureCookieName over HTTPS, else CookieName.
func (s *Server) sessionCookieName(r *http.Request) string {
	if s.secureCookies(r) {
		return SecureCookieName
	}
	return CookieName
}

// sessionCookie returns the session cookie's value, "" without one. A
// request with two (another host of the domain set a second, for a longer
// path or the parent domain, so that the browser would send it first) is
// ambiguous: it counts as none, since nothing tells whose session is the
// viewer's.
func (s *Server) sessionCookie(r *http.Request) (token string, ambiguous bool) {
	name := s.sessionCookieName(r)
	n := 0
	for _, c := range r.Cookies() {
		if c.Name == name {
			token, n = c.Value, n+1
		}
	}
	if n > 1 {
		return "", true
	}
	return token, false
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

// actorFrom returns who made a request, for the services: the allocation
// whose token came with it (the narrower credential, when a task sends a
// session too), else its signed-in user, else nobody.
func actorFrom(r *http.Request) authz.Actor {
	if a, ok := r.Context().Value(allocationActorKey).(authz.Actor); ok {
		return a
	}
	if a, ok := r.Context().Value(userActorKey).(authz.Actor); ok {
		return a
	}
	if u, ok := userFrom(r); ok {
		return authz.User(u)
	}
	return authz.Actor{}
}

// viewer is what of a list that needs perm to be read the requester sees
// (authz.Visible), as the database filters it.
func viewer(r *http.Request, perm authz.Permission) db.Viewer {
	v := authz.Visible(actorFrom(r), perm)
	if v.All {
		return db.Viewer{}
	}
	return db.Viewer{Filtered: true, UserID: v.UserID, Roles: v.Roles}
}

// readable answers nil when the requester may read o; under RBAC an object
// they may not read is not_found, as if it were not there.
func readable(r *http.Request, o authz.Object) error {
	a := actorFrom(r)
	err := authz.Can(a, authz.Read, o)
	if _, rbac := a.RBAC(); rbac && resolute.ErrorCode(err) == resolute.EForbidden {
		return resolute.Errorf(resolute.ENotFound, "%s %s not found", o.Kind, o.Name)
	}
	return err
}

// sessionAmbiguous says whether a request carried more than one session
// cookie (sessionCookie).
func sessionAmbiguous(r *http.Request) bool {
	b, _ := r.Context().Value(ambiguousKey).(bool)
	return b
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

// allocationFrom returns the task allocation that made a request.
func allocationFrom(r *http.Request) (resolute.Allocation, bool) {
	a, ok := r.Context().Value(allocationKey).(resolute.Allocation)
	return a, ok
}

// requireTaskOrUser answers 401 unless a running task's allocation token or
// a user's session came with the request.
func (s *Server) requireTaskOrUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, isTask := allocationFrom(r)
		_, isUser := userFrom(r)
		if !isTask && !isUser {
			s.error(w, r, resolute.Errorf(resolute.EUnauthorized, "not signed in and no allocation token of a running task"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAPIUser answers 401 to API calls without a valid session.
func (s *Server) requireAPIUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := userFrom(r); !ok {
			msg := "not signed in: log in with `det user login` or POST /api/v1/auth/login"
			if sessionAmbiguous(r) {
				msg = ambiguousSession
			}
			s.error(w, r, resolute.Errorf(resolute.EUnauthorized, "%s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAdmin answers 403 to users who are not administrators.
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Under RBAC a ClusterAdmin by role is one too.
		if err := authz.Can(actorFrom(r), authz.Administer, authz.Cluster); err != nil {
			s.error(w, r, resolute.Errorf(resolute.EForbidden, "only administrators may do this"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// uploadPaths take a context directory, so a larger body.
var uploadPaths = map[string]bool{"/api/v1/experiments": true, "/experiments/new": true, "/api/v1/commands": true,
	"/api/v1/notebooks": true, "/api/v1/shells": true, "/api/v1/tensorboards": true}

// limitBodies bounds request bodies; reading past the limit fails and the
// handler answers 413. An upload's body must also keep coming (idleBody).
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := s.cfg.MaxBodyBytes
		if r.Method == http.MethodPost && uploadPaths[r.URL.Path] {
			limit = maxUploadBytes // a context directory of up to 96 MiB
			r.Body = s.uploads.idleBody(w, r.Body)
		}
		if r.ContentLength > limit {
			s.error(w, r, resolute.Errorf(resolute.ETooLarge, "request body is larger than %d bytes", limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
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
