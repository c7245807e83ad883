package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/resolute-ml/resolute"
)

// Prefix is the path under which the proxy serves tasks: /proxy/{task id}/....
const Prefix = "/proxy/"

// State is where a task's service stands, as far as the proxy cares.
type State int

// The states of a task's service.
const (
	// Starting: the task exists but its service does not answer yet.
	Starting State = iota + 1
	// Ready: the service listens at Target.URL.
	Ready
	// Ended: the task is over; Target.EndedState says how.
	Ended
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Ready:
		return "ready"
	case Ended:
		return "ended"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Target is what the proxy needs to know about one task.
type Target struct {
	// URL is the service's base address, e.g. http://127.0.0.1:2901; its path
	// is normally empty, since the request path goes through unchanged.
	URL *url.URL
	// State says whether to forward, to wait or to refuse.
	State State
	// EndedState is how an Ended task ended, e.g. "TERMINATED", "COMPLETED".
	EndedState string
	// Owner is the ID of the user who owns the task, for Authorize.
	Owner int64
	// StripPrefix sends the request's path without /proxy/{task id} to the
	// service, which then needs not know where it is mounted (a task's
	// HTTP proxy port), and says the prefix in X-Forwarded-Prefix.
	StripPrefix bool
}

// Lookup finds a task's service. It returns a *resolute.Error with code
// resolute.ENotFound for a task it does not know.
type Lookup func(ctx context.Context, taskID string) (Target, error)

// Proxy is an http.Handler that forwards /proxy/{task id}/... to the task's
// service and records activity per task. It is safe for concurrent use.
type Proxy struct {
	lookup       Lookup
	authorize    func(r *http.Request, t Target) error
	onError      func(w http.ResponseWriter, r *http.Request, err error)
	logger       *slog.Logger
	now          func() time.Time
	stripCookies map[string]bool
	dropCookies  map[string]bool
	rp           *httputil.ReverseProxy
	tasks        sync.Map // task ID → *activity
	traffic      traffic
}

// Option configures a Proxy.
type Option func(*Proxy)

// WithAuthorize sets the check run on every request after Lookup and before
// anything about the task is shown. It returns a *resolute.Error, normally
// resolute.EUnauthorized or resolute.EForbidden, to refuse. Without it every
// request is allowed: the caller must then authenticate before the proxy.
func WithAuthorize(fn func(r *http.Request, t Target) error) Option {
	return func(p *Proxy) { p.authorize = fn }
}

// WithErrorHandler hands every refusal (unknown task, Authorize, ended task,
// starting task for a non-browser client) to fn, which maps the error's code
// to a status and renders it. Without it the proxy answers JSON to clients
// that accept JSON and a small HTML page otherwise.
func WithErrorHandler(fn func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(p *Proxy) { p.onError = fn }
}

// WithTransport sets how the proxy reaches services, e.g. one that trusts the
// master's CA for HTTPS notebooks. The default keeps many idle keep-alive
// connections per service and never asks the service for compression.
func WithTransport(rt http.RoundTripper) Option {
	return func(p *Proxy) { p.rp.Transport = rt }
}

// WithLogger sets the logger for failures to reach services.
func WithLogger(l *slog.Logger) Option {
	return func(p *Proxy) { p.logger = l }
}

// WithClock sets the clock that activity is recorded with.
func WithClock(now func() time.Time) Option {
	return func(p *Proxy) { p.now = now }
}

// WithStripCookies removes the named cookies, such as the master's session
// cookie, from requests before they reach a service: the service runs user
// code, which must not see other users' credentials.
func WithStripCookies(names ...string) Option {
	return func(p *Proxy) {
		for _, n := range names {
			p.stripCookies[n] = true
		}
	}
}

// WithDropSetCookies drops the service's Set-Cookie headers that set one
// of the named cookies, such as the master's session cookie or the proxy's
// own, and every cookie without a name (which browsers send as "value",
// where a value "auth=x" would pose as the cookie auth).
func WithDropSetCookies(names ...string) Option {
	return func(p *Proxy) {
		for _, n := range names {
			p.dropCookies[n] = true
		}
	}
}

// New returns a Proxy that finds tasks with lookup.
func New(lookup Lookup, opts ...Option) *Proxy {
	p := &Proxy{
		lookup:       lookup,
		logger:       slog.Default(),
		now:          time.Now,
		stripCookies: map[string]bool{},
		dropCookies:  map[string]bool{},
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   p.rewrite,
		Transport: newGetTransport(DefaultTransport()),
		// No flush timer: ReverseProxy flushes event streams after every
		// write; the bodies in activity.go flush the others after every
		// write or whenever the proxy would wait on the service.
		FlushInterval:  0,
		BufferPool:     newBufferPool(copyBufferSize),
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.backendError,
	}
	for _, o := range opts {
		o(p)
	}
	p.rp.ErrorLog = slog.NewLogLogger(p.logger.Handler(), slog.LevelWarn)
	return p
}

// DefaultTransport returns the transport New uses: HTTP/1.1 keep-alive with
// room for many idle connections per service, short dial timeouts, and no
// compression asked for (the client's Accept-Encoding goes through as is).
func DefaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // services are local: never through an HTTP_PROXY
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // long polls and streams may take their time
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
}

// TaskID returns the task ID of a request path /proxy/{task id}/..., or "".
func TaskID(r *http.Request) string {
	id, _ := splitPath(r.URL.Path)
	return id
}

// splitPath returns the task ID of path and whether anything (even "/")
// follows it.
func splitPath(path string) (taskID string, hasRest bool) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return "", false
	}
	taskID, _, hasRest = strings.Cut(rest, "/")
	return taskID, hasRest
}

// ServeHTTP routes /proxy/{task id}/... to the task's service: a waiting page
// while it starts, 410 once it ended, 404 for a task Lookup does not know.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	taskID, hasRest := splitPath(r.URL.Path)
	if taskID == "" {
		p.fail(w, r, resolute.Errorf(resolute.ENotFound, "no task ID in path %s", r.URL.Path))
		return
	}
	if IsWebSocket(r) || !isSafe(r.Method) {
		if err := CheckOrigin(r); err != nil {
			p.fail(w, r, err)
			return
		}
	}
	if !hasRest && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// Services are mounted at /proxy/{id}/: relative links need the slash.
		u := *r.URL
		u.Path, u.RawPath = r.URL.Path+"/", ""
		http.Redirect(w, r, u.RequestURI(), http.StatusFound)
		return
	}
	t, err := p.lookup(r.Context(), taskID)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	if p.authorize != nil {
		if err := p.authorize(r, t); err != nil {
			p.fail(w, r, err)
			return
		}
	}
	switch t.State {
	case Starting:
		p.starting(w, r, taskID)
	case Ended:
		msg := "task " + taskID + " ended"
		if t.EndedState != "" {
			msg += ": " + t.EndedState
		}
		p.fail(w, r, &resolute.Error{Code: resolute.EGone, Message: msg})
	case Ready:
		if t.URL == nil {
			p.fail(w, r, fmt.Errorf("proxy: task %s is ready without a URL", taskID))
			return
		}
		p.forward(w, r, taskID, t.URL, t.StripPrefix)
	default:
		p.fail(w, r, fmt.Errorf("proxy: task %s has unknown state %v", taskID, t.State))
	}
}

// route is what the shared ReverseProxy needs to know about one request.
type route struct {
	taskID string
	target *url.URL
	strip  bool // Target.StripPrefix
	act    *activity
	w      syncWriter // the client's, shared by ReverseProxy and bulkBody
}

type routeKey struct{}

// forward proxies one request to target, recording activity before and after.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, taskID string, target *url.URL, strip bool) {
	act := p.activity(taskID)
	act.touch(p.now())
	rt := &route{taskID: taskID, target: target, strip: strip, act: act, w: syncWriter{ResponseWriter: w}}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &countedBody{ReadCloser: r.Body, n: &p.traffic.toTasks}
	}
	p.rp.ServeHTTP(&rt.w, r.WithContext(context.WithValue(r.Context(), routeKey{}, rt)))
	act.touch(p.now())
}

// rewrite sends the request to the task's service with its path unchanged.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	rt := pr.In.Context().Value(routeKey{}).(*route)
	if rt.strip {
		prefix := Prefix + rt.taskID
		in := *pr.In.URL
		in.Path = strings.TrimPrefix(in.Path, prefix)
		in.RawPath = strings.TrimPrefix(in.RawPath, prefix)
		pr.Out.URL = &in
	}
	pr.SetURL(rt.target)
	if rt.strip {
		pr.Out.Header.Set("X-Forwarded-Prefix", Prefix+rt.taskID)
	}
	// Keep the browser's Host: Jupyter compares it with Origin on websocket
	// upgrades and builds its redirects from it.
	pr.Out.Host = pr.In.Host
	pr.SetXForwarded()
	if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
		pr.Out.Header.Set("X-Real-Ip", ip)
	}
	if len(p.stripCookies) > 0 {
		stripCookies(pr.Out.Header, p.stripCookies)
	}
}

// stripCookies removes the named cookies from h's Cookie headers.
func stripCookies(h http.Header, names map[string]bool) {
	var kept []string
	for _, line := range h.Values("Cookie") {
		for _, c := range strings.Split(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(c), "=")
			if name != "" && !names[name] {
				kept = append(kept, strings.TrimSpace(c))
			}
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// dropSetCookies removes the Set-Cookie headers of h that set one of the
// named cookies or a cookie without a name.
func dropSetCookies(h http.Header, names map[string]bool) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	h.Del("Set-Cookie")
	for _, line := range lines {
		pair, _, _ := strings.Cut(line, ";")
		name, _, hasValue := strings.Cut(pair, "=")
		name = strings.Trim(name, " \t")
		if !hasValue || name == "" || names[name] {
			continue
		}
		h.Add("Set-Cookie", line)
	}
}

// modifyResponse wraps the service's response so that reading it, or
// traffic on an upgraded (websocket) connection, counts as activity.
func (p *Proxy) modifyResponse(res *http.Response) error {
	if len(p.dropCookies) > 0 {
		dropSetCookies(res.Header, p.dropCookies)
	}
	rt, ok := res.Request.Context().Value(routeKey{}).(*route)
	if !ok {
		return nil
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		if conn, ok := res.Body.(io.ReadWriteCloser); ok {
			res.Body = newActiveConn(conn, rt.act, p.now)
		}
		return nil
	}
	if res.Body == nil || res.Body == http.NoBody {
		return nil
	}
	if isEventStream(res.Header) {
		// ReverseProxy flushes these after every write by itself.
		res.Body = &activeBody{ReadCloser: res.Body, act: rt.act, now: p.now}
		return nil
	}
	if res.Request.Method != http.MethodHead && (res.ContentLength < 0 || res.ContentLength >= bulkThreshold) {
		// Downloads, and bodies of unknown length, which may be downloads
		// (a zipped folder) or streams (logs): bulkBody flushes after every
		// write, as ReverseProxy would, but writes more at a time.
		res.Body = &bulkBody{ReadCloser: res.Body, w: &rt.w, act: rt.act, now: p.now,
			bulk: res.ContentLength >= bulkThreshold}
		return nil
	}
	res.Body = &activeBody{ReadCloser: res.Body, flush: rt.w.FlushError, act: rt.act, now: p.now}
	return nil
}

// isEventStream says whether h is the header of a server-sent event stream.
func isEventStream(h http.Header) bool {
	ct, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return ct == "text/event-stream"
}
