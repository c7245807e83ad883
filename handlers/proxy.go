package handlers

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/proxy"
	"github.com/resolute-ml/resolute/views"
)

// The task origin. What tasks serve (notebooks, TensorBoards) is proxied
// only on the task origin (Config.TasksURL, the master's second listener),
// never under the master's own origin: a page a task serves must not run
// with a viewer's master session. The way in:
//
//  1. A page of the master links "Open" to GET /tasks/{id}/open (the CLI
//     calls POST /api/v1/tasks/{id}/open): the task's owner or an
//     administrator gets a ticket, good once for a minute, for that task.
//  2. The browser goes to <the task's origin>/redeem?ticket=...; the ticket
//     becomes the task origin's own cookie (TaskCookieName), HttpOnly,
//     host-only, for /proxy/{id}/ alone, and the browser goes on to the task.
//  3. Every request to /proxy/{id}/ on the task origin shows that cookie;
//     control.TaskOrigin says whose it is and asks again whether they may
//     open the task. Jupyter's own token (?token=, Authorization: token)
//     lets clients that are not browsers in, as before.
//
// The master's session cookie is never accepted on the task origin and never
// reaches a task; a task's Set-Cookie for it or for the task cookie is
// dropped. Anything else asked of the task origin goes to the master.
//
// Tasks share one task origin unless tasks_url has {task} in its host: then
// each has an origin of its own (resolute.TasksURL), a task is served and
// its tickets redeemed only on its own host, and its cookie, host-only,
// never reaches another task's host. Elsewhere /proxy/{id}/ is not found.

// TaskCookieName is the task origin's cookie: one per task, for its path.
const TaskCookieName = "resolute_task"

// redeemPath is where the task origin redeems tickets.
const redeemPath = "/redeem"

// newProxy builds the task proxy of the task origin: it finds a task's
// service, lets in only those with the task cookie whom the master still
// lets open the task (or Jupyter's own calls with the notebook's token), and
// keeps the master's cookie and its own from the task both ways.
func (s *Server) newProxy() *proxy.Proxy {
	return proxy.New(s.proxyLookup,
		proxy.WithAuthorize(s.proxyAuthorize),
		proxy.WithErrorHandler(s.proxyError),
		proxy.WithStripCookies(CookieName, SecureCookieName, TaskCookieName),
		proxy.WithDropSetCookies(CookieName, SecureCookieName, TaskCookieName),
		proxy.WithLogger(s.logger))
}

// proxyLookup says where a task's service is and in what state the task is.
func (s *Server) proxyLookup(ctx context.Context, taskID string) (proxy.Target, error) {
	if _, _, ok := splitPortKey(taskID); ok {
		return portTarget(ctx, taskID)
	}
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

// proxyAuthorize lets in whoever shows a task cookie of this task that
// control.TaskOrigin accepts, and requests that carry the notebook's own
// token (Jupyter's calls, scripts). For people it signs the request to
// Jupyter with the notebook's token, so they never handle it. A bearer
// token (the master's) is neither accepted nor passed on.
func (s *Server) proxyAuthorize(r *http.Request, _ proxy.Target) error {
	id := proxy.TaskID(r)
	if _, _, ok := splitPortKey(id); ok {
		return nil // withPortVisitor let it through, and portTarget found it
	}
	if bearerToken(r) != "" {
		r.Header.Del("Authorization")
	}
	var refused error
	for _, c := range r.Cookies() {
		// A page of another task may have set a cookie of this name for
		// this path; any one that opens the task will do.
		if c.Name != TaskCookieName {
			continue
		}
		_, task, err := s.svc.TaskOrigin.Visitor(r.Context(), c.Value, id)
		if err == nil {
			r.Header.Del("Authorization")
			if task.ServiceToken != "" {
				r.Header.Set("Authorization", "token "+task.ServiceToken)
			}
			return nil
		}
		if code := resolute.ErrorCode(err); code != resolute.EUnauthorized {
			refused = err // forbidden now, or internal
		}
	}
	if tok := notebookToken(r); tok != "" {
		task, err := s.db.Task(r.Context(), id)
		if err == nil && task.ServiceToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(task.ServiceToken)) == 1 {
			return nil
		}
	}
	if refused != nil {
		return refused
	}
	return resolute.Errorf(resolute.EUnauthorized, "open this task from the master's pages (or `det notebook open`)")
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

// proxyError sends browsers without a task cookie to the master's open
// route for the page they asked for (which signs them in first if need
// be), and answers everything else with the proxy's plain pages: the task
// origin shows nothing of the master's.
func (s *Server) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	code := resolute.ErrorCode(err)
	if id := proxy.TaskID(r); code == resolute.EUnauthorized && id != "" && r.Method == http.MethodGet &&
		strings.Contains(r.Header.Get("Accept"), "text/html") && !proxy.IsWebSocket(r) {
		http.Redirect(w, r, s.cfg.Master.URL+openPath(id, taskPath(r, id)), http.StatusSeeOther)
		return
	}
	if code == resolute.EInternal {
		s.logger.Error("task origin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	proxy.WriteError(w, r, err)
}

// openPath is the master's route that opens task id (or ID:N, a port of
// it) at path.
func openPath(id, path string) string {
	if task, port, ok := splitPortKey(id); ok {
		return openPortPath(task, port, path)
	}
	p := "/tasks/" + url.PathEscape(id) + "/open"
	if path != "" {
		p += "?path=" + url.QueryEscape(path)
	}
	return p
}

// taskPath is where under /proxy/{id}/ a request goes, with its query.
func taskPath(r *http.Request, id string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.EscapedPath(), proxy.Prefix+id), "/")
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	return p
}

// ticketURL is the link on the task's origin that redeems a ticket.
func (s *Server) ticketURL(tk control.Ticket) string {
	return s.cfg.TasksURL.Origin(tk.TaskID) + redeemPath + "?ticket=" + url.QueryEscape(tk.Token)
}

// onTaskHost refuses, as not found, a request for a task on another host
// than the task's own, where tasks have origins of their own: a page of
// one task must not reach another as if it were its own.
func (s *Server) onTaskHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, _, _ := splitPortKey(proxy.TaskID(r)); id != "" && !s.cfg.TasksURL.Serves(r.Host, id) {
			proxy.WriteError(w, r, errElsewhere(id))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errElsewhere is the answer to a request for task id on another task's
// host.
func errElsewhere(id string) error {
	return resolute.Errorf(resolute.ENotFound, "task %s is not served on this host", id)
}

// handleTaskOpen serves GET /tasks/{id}/open[?path=]: the task's owner or
// an administrator gets a ticket and goes to the task origin with it.
// Only a click on one of the master's own pages, or a link typed or
// bookmarked, gets one: a page elsewhere (another task's, on the task
// origin) could otherwise make the viewer's browser open their task where
// that page can reach it. Such a navigation gets a page with the same link
// to click instead.
func (s *Server) handleTaskOpen(w http.ResponseWriter, r *http.Request) {
	if !navigatedFromHere(r) {
		id := chi.URLParam(r, "id")
		u, signedIn := userFrom(r)
		page := views.ErrorPage{Shell: s.shell(r, "Open "+id, ""), SignedIn: signedIn, Status: http.StatusForbidden,
			Message: "This link to " + id + " came from another site. Tasks open only from Resolute's own pages, " +
				"so that a page elsewhere cannot open your tasks where it can reach them.",
			Next: openPath(id, r.URL.Query().Get("path")), NextLabel: "Open " + id}
		page.Shell.User = u
		s.render(w, r, http.StatusForbidden, views.ErrorView(page))
		return
	}
	tk, err := s.taskTicket(r, chi.URLParam(r, "id"), r.URL.Query().Get("port"), r.URL.Query().Get("path"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, s.ticketURL(tk), http.StatusSeeOther)
}

// navigatedFromHere says whether a navigation came from one of the
// master's own pages or from no page at all (typed, bookmarked, opened by
// the CLI), as the browser's Sec-Fetch-Site tells; browsers too old to
// send it are believed.
func navigatedFromHere(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// handleAPITaskOpen serves POST /api/v1/tasks/{id}/open: a link with a
// ticket, for det notebook open and det tensorboard open to hand to a
// browser.
func (s *Server) handleAPITaskOpen(w http.ResponseWriter, r *http.Request) {
	var req resolute.OpenTaskRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			s.error(w, r, err)
			return
		}
	}
	var port string
	if req.Port != 0 {
		port = strconv.Itoa(req.Port)
	}
	tk, err := s.taskTicket(r, chi.URLParam(r, "id"), port, req.Path)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resolute.OpenTaskResponse{URL: s.ticketURL(tk), ExpiresAt: tk.ExpiresAt})
}

// handleOldProxyLink serves GET /proxy/{id}/... on the master, which no
// longer proxies anything: old links go to the open route of the same page.
func (s *Server) handleOldProxyLink(w http.ResponseWriter, r *http.Request) {
	id := proxy.TaskID(r)
	if id == "" {
		s.handleNotFound(w, r)
		return
	}
	http.Redirect(w, r, openPath(id, taskPath(r, id)), http.StatusSeeOther)
}

// handleTaskRedeem serves GET /redeem?ticket= on the task origin: a good
// ticket, on its task's own host, becomes the task cookie of its task, and
// the browser goes on to the task.
func (s *Server) handleTaskRedeem(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	ts, err := s.svc.TaskOrigin.Redeem(r.Context(), r.URL.Query().Get("ticket"))
	if err != nil {
		if resolute.ErrorCode(err) == resolute.EInternal {
			s.logger.Error("redeem a task ticket", "err", err)
		}
		proxy.WriteError(w, r, err)
		return
	}
	if !s.cfg.TasksURL.Serves(r.Host, ts.TaskID) {
		// Used up, and its task session unknown to anyone: the cookie
		// would be of no use on this host, and of harm on a shared one.
		proxy.WriteError(w, r, errElsewhere(ts.TaskID))
		return
	}
	prefix := proxy.Prefix + ts.TaskID + "/"
	if ts.Port != 0 {
		prefix = proxy.Prefix + portKey(ts.TaskID, ts.Port) + "/"
	}
	http.SetCookie(w, &http.Cookie{Name: TaskCookieName, Value: ts.Token, Path: prefix, Expires: ts.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(r)})
	http.Redirect(w, r, prefix+strings.TrimLeft(ts.Path, "/"), http.StatusSeeOther)
}

// handleToMaster serves every other path of the task origin: the master's.
func (s *Server) handleToMaster(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, s.cfg.Master.URL+r.URL.RequestURI(), http.StatusFound)
}

// withAddress fills where a person opens a task and where clients that are
// not browsers reach it. A notebook's token is only given to those who may
// open it: its owner and administrators.
func (s *Server) withAddress(r *http.Request, t resolute.Task) resolute.Task {
	switch t.Type {
	case resolute.TaskNotebook, resolute.TaskTensorBoard:
		t.ServiceAddress = openPath(t.ID, "")
		t.ServiceURL = s.cfg.TasksURL.Origin(t.ID) + proxy.Prefix + t.ID + "/"
		if t.Type == resolute.TaskNotebook && t.ServiceToken != "" && authz.Can(actorFrom(r), authz.ChangeTask, authz.Task(t)) == nil {
			t.ServiceURL += "?token=" + t.ServiceToken
		}
	case resolute.TaskShell:
		t.ServiceAddress = "/tasks/" + t.ID + "/terminal"
	}
	return t
}
