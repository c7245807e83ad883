package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/proxy"
	"github.com/resolute-ml/resolute/views"
)

// HTTP proxy ports (control/proxy_ports.go) on the task origin: port N of
// task ID is served at /proxy/ID:N/, Determined's address, to the task's
// owner with a task cookie for that path alone (a ticket from
// GET /tasks/ID/open?port=N). The ":" keeps Determined's links working, and
// it keeps the cookie paths apart: /proxy/ID/ (the task's own service) is
// no prefix of /proxy/ID:N/, nor /proxy/ID:N/ of /proxy/ID:NM/, so no
// cookie of one reaches another. The service gets the path without
// /proxy/ID:N (X-Forwarded-Prefix says it), so a web server that does not
// know where it is mounted (python -m http.server, MLflow) works.

// splitPortKey splits the task part of a proxy path, ID:N, into the task's
// ID and the port; ok is false for a task's own service (no port) and for
// a port that is not written as 1..65535 is.
func splitPortKey(key string) (id string, port int, ok bool) {
	id, p, found := strings.Cut(key, ":")
	if !found || id == "" {
		return key, 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
		return key, 0, false
	}
	return id, n, true
}

// portKey is the task part of the proxy path of port port of task id.
func portKey(id string, port int) string {
	return id + ":" + strconv.Itoa(port)
}

// portURL is where on the task origin port port of task id is served.
func (s *Server) portURL(id string, port int) string {
	return s.cfg.TasksURL.Origin(id) + proxy.Prefix + portKey(id, port) + "/"
}

// portAddr carries, in a request's context, where the master reaches the
// HTTP proxy port that the request's task cookie opened.
type portAddr struct{}

// withPortVisitor lets a request for /proxy/ID:N/... through to the proxy
// only with a task cookie for that port whose user may still open it
// (control.TaskOrigin.PortVisitor), and tells proxyLookup where the port
// is. Requests for a task's own service pass as they are.
func (s *Server) withPortVisitor(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := proxy.TaskID(r)
		id, port, ok := splitPortKey(key)
		if !ok || !strings.HasPrefix(r.URL.Path, proxy.Prefix+key+"/") {
			next.ServeHTTP(w, r) // the proxy adds the slash, or refuses
			return
		}
		if proxy.IsWebSocket(r) || !(r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions) {
			if err := proxy.CheckOrigin(r); err != nil {
				s.proxyError(w, r, err)
				return
			}
		}
		// Neither the master's bearer token nor anything else of the
		// master's goes to the task (the proxy strips the cookies).
		r.Header.Del("Authorization")
		var err error = resolute.Errorf(resolute.EUnauthorized, "open this port from the task's page on the master (or `det task open-port`)")
		for _, c := range r.Cookies() {
			if c.Name != TaskCookieName {
				continue
			}
			_, addr, verr := s.svc.TaskOrigin.PortVisitor(r.Context(), c.Value, id, port)
			if verr == nil {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), portAddr{}, addr)))
				return
			}
			if resolute.ErrorCode(verr) != resolute.EUnauthorized {
				err = verr // forbidden now, not running, ended, or internal
			}
		}
		s.proxyError(w, r, err)
	})
}

// portTarget is the proxy's target for port key key, which withPortVisitor
// let through.
func portTarget(ctx context.Context, key string) (proxy.Target, error) {
	addr, ok := ctx.Value(portAddr{}).(string)
	if !ok || addr == "" {
		return proxy.Target{}, resolute.Errorf(resolute.EUnauthorized, "open %s from the task's page on the master", key)
	}
	return proxy.Target{State: proxy.Ready, URL: &url.URL{Scheme: "http", Host: addr}, StripPrefix: true}, nil
}

// openPortPath is the master's route that opens port port of task id at
// path.
func openPortPath(id string, port int, path string) string {
	p := "/tasks/" + url.PathEscape(id) + "/open?port=" + strconv.Itoa(port)
	if path != "" {
		p += "&path=" + url.QueryEscape(path)
	}
	return p
}

// taskTicket makes the ticket that GET /tasks/{id}/open and POST
// /api/v1/tasks/{id}/open ask for: to task id's service, or, with port,
// to that HTTP proxy port of it.
func (s *Server) taskTicket(r *http.Request, id, port, path string) (control.Ticket, error) {
	if port == "" {
		return s.svc.TaskOrigin.Ticket(r.Context(), actorFrom(r), tokenFrom(r), id, path)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return control.Ticket{}, resolute.Errorf(resolute.EInvalid, "port: must be a port number, got %q", port)
	}
	return s.svc.TaskOrigin.PortTicket(r.Context(), actorFrom(r), tokenFrom(r), id, n, path)
}

// taskPorts are the links to task t's HTTP proxy ports, for its owner
// (who may open it) while it runs.
func (s *Server) taskPorts(r *http.Request, t resolute.Task) []views.TaskPort {
	u, ok := userFrom(r)
	if !ok || u.ID != t.UserID || t.State != resolute.TaskRunning || authz.Can(actorFrom(r), authz.OpenTask, authz.Task(t)) != nil {
		return nil
	}
	var ports []views.TaskPort
	for _, p := range control.HTTPPorts(t) {
		ports = append(ports, views.TaskPort{Port: p, Open: openPortPath(t.ID, p, "")})
	}
	return ports
}

// trialPorts are the links to trial t's HTTP proxy ports, for the owner of
// its experiment e while it runs.
func (s *Server) trialPorts(r *http.Request, t resolute.Trial, e resolute.Experiment) []views.TaskPort {
	u, ok := userFrom(r)
	if !ok || u.ID != e.UserID || resolute.Terminal(t.State) {
		return nil
	}
	var ports []views.TaskPort
	for _, p := range control.TrialHTTPPorts(e) {
		ports = append(ports, views.TaskPort{Port: p, Open: openPortPath(resolute.TrialTaskID(t.ID), p, "")})
	}
	return ports
}
