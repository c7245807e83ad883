package handlers

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/proxy"
)

// newProxy builds the task proxy mounted at /proxy/: it finds a task's
// service, lets only its owner and administrators in (or Jupyter's own calls
// with the notebook's token), and keeps the master's session cookie from
// the task.
func (s *Server) newProxy() *proxy.Proxy {
	return proxy.New(s.proxyLookup,
		proxy.WithAuthorize(s.proxyAuthorize),
		proxy.WithErrorHandler(s.proxyError),
		proxy.WithStripCookies(CookieName),
		proxy.WithLogger(s.logger))
}

// proxyLookup says where a task's service is and in what state the task is.
func (s *Server) proxyLookup(ctx context.Context, taskID string) (proxy.Target, error) {
	t, err := s.db.Task(ctx, taskID)
	if err != nil {
		return proxy.Target{}, err
	}
	target := proxy.Target{Owner: t.UserID}
	switch {
	case t.Type != resolute.TaskNotebook && t.Type != resolute.TaskTensorBoard:
		return target, resolute.Errorf(resolute.ENotFound, "%s serves no web page", t.ID)
	case t.State == resolute.TaskTerminated:
		target.State, target.EndedState = proxy.Ended, strings.TrimSpace(t.State+" ("+t.EndReason+")")
	case t.Ready && t.ServicePort != nil:
		target.State = proxy.Ready
		target.URL = &url.URL{Scheme: "http", Host: t.ServiceHostPort()}
	default:
		target.State = proxy.Starting
	}
	return target, nil
}

// proxyAuthorize lets in the task's owner and administrators, and requests
// that carry the notebook's own token (Jupyter's calls). For people it
// signs the request to Jupyter with the notebook's token, so they never
// handle it, and the master's own credentials never reach the task.
func (s *Server) proxyAuthorize(r *http.Request, t proxy.Target) error {
	if u, ok := userFrom(r); ok {
		if err := authz.Can(authz.User(u), authz.ChangeTask, authz.Object{Kind: "task", Name: proxy.TaskID(r), OwnerID: t.Owner}); err != nil {
			return resolute.Errorf(resolute.EForbidden, "this task belongs to another user")
		}
		r.Header.Del("Authorization")
		if task, err := s.db.Task(r.Context(), proxy.TaskID(r)); err == nil && task.ServiceToken != "" {
			r.Header.Set("Authorization", "token "+task.ServiceToken)
		}
		return nil
	}
	if tok := notebookToken(r); tok != "" {
		task, err := s.db.Task(r.Context(), proxy.TaskID(r))
		if err == nil && task.ServiceToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(task.ServiceToken)) == 1 {
			return nil
		}
	}
	return resolute.Errorf(resolute.EUnauthorized, "sign in to open this task")
}

func notebookToken(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if h := r.Header.Get("Authorization"); len(h) > 6 && strings.EqualFold(h[:6], "token ") {
		return strings.TrimSpace(h[6:])
	}
	return ""
}

// proxyError sends people who are not signed in to the login page and
// answers everything else as every other page does.
func (s *Server) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if resolute.ErrorCode(err) == resolute.EUnauthorized && r.Method == http.MethodGet &&
		strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, "/login?redirect="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	s.error(w, r, err)
}
