package handlers

import (
	"bufio"
	"crypto/subtle"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
)

// MetricsAccess says whether the master serves /metrics and to whom:
// administrators (a session cookie or an API token of one) and, when Token
// is set, whoever sends it as a bearer token (a Prometheus server).
type MetricsAccess struct {
	Enabled bool   // observability.enable_prometheus
	Token   string // observability.metrics_token; "" for none
}

// handleMetrics serves GET /metrics, the master's Prometheus series
// (package monitoring): 404 unless observability.enable_prometheus is set;
// then to administrators and to the bearer of observability.metrics_token,
// 401 to anyone else not signed in and 403 to other users. The series name
// trials, pools and agents, so they are not for every user.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Metrics.Enabled || s.monitoring == nil {
		s.handleNotFound(w, r)
		return
	}
	if !s.mayScrape(r) {
		if _, ok := userFrom(r); ok {
			s.error(w, r, resolute.Errorf(resolute.EForbidden, "only administrators and the bearer of observability.metrics_token may read /metrics"))
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="resolute metrics"`)
		s.error(w, r, resolute.Errorf(resolute.EUnauthorized, "send observability.metrics_token as a bearer token, or sign in as an administrator"))
		return
	}
	s.monitoring.Handler().ServeHTTP(w, r)
}

// mayScrape says whether r comes from an administrator or carries the
// metrics token (compared in constant time).
func (s *Server) mayScrape(r *http.Request) bool {
	if _, ok := userFrom(r); ok && authz.Can(actorFrom(r), authz.Administer, authz.Cluster) == nil { // a ClusterAdmin by role too
		return true
	}
	tok := s.cfg.Metrics.Token
	got := bearerToken(r)
	return tok != "" && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1
}

// countRequests tells the monitoring of every request once it is answered:
// its method, chi's route pattern (known only then) and its status.
func (s *Server) countRequests(next http.Handler) http.Handler {
	if s.monitoring == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			s.monitoring.ObserveRequest(r.Method, route, sw.status(), time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status a handler answered with. Flushing and
// hijacking (SSE, websockets) go through to the writer beneath.
type statusWriter struct {
	http.ResponseWriter
	code     int
	hijacked bool
}

// WriteHeader implements http.ResponseWriter.
func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker, for websockets.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, rw, err
}

// Unwrap gives http.ResponseController the writer beneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the status answered: 101 for a hijacked (upgraded)
// connection, 200 when the handler wrote nothing.
func (w *statusWriter) status() int {
	switch {
	case w.hijacked:
		return http.StatusSwitchingProtocols
	case w.code == 0:
		return http.StatusOK
	}
	return w.code
}
