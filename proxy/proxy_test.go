package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/proxy"
)

// tasks is a static Lookup for tests.
type tasks map[string]proxy.Target

func (ts tasks) lookup(_ context.Context, id string) (proxy.Target, error) {
	t, ok := ts[id]
	if !ok {
		return proxy.Target{}, resolute.Errorf(resolute.ENotFound, "task %s not found", id)
	}
	return t, nil
}

// clock is a settable clock for activity tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// seen is what an echo backend saw of one request.
type seen struct {
	Backend, Method, Path, RawPath, Query, Host, Cookie string
	XFF, XFProto, XFHost, XRealIP                       string
	Body                                                string
}

// echoBackend answers every request with a JSON description of it.
func echoBackend(t *testing.T, name string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{
			Backend: name, Method: r.Method, Path: r.URL.Path, RawPath: r.URL.RawPath, Query: r.URL.RawQuery,
			Host: r.Host, Cookie: r.Header.Get("Cookie"),
			XFF: r.Header.Get("X-Forwarded-For"), XFProto: r.Header.Get("X-Forwarded-Proto"),
			XFHost: r.Header.Get("X-Forwarded-Host"), XRealIP: r.Header.Get("X-Real-Ip"),
			Body: string(body),
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// serve starts the proxy behind a real HTTP server.
func serve(t testing.TB, p *proxy.Proxy) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, u, accept string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func TestRoutingAndPassthrough(t *testing.T) {
	a, b := echoBackend(t, "a"), echoBackend(t, "b")
	p := proxy.New(tasks{
		"task-a": {URL: mustURL(t, a.URL), State: proxy.Ready},
		"task-b": {URL: mustURL(t, b.URL), State: proxy.Ready},
	}.lookup)
	srv := serve(t, p)
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := map[string]struct {
		path string
		want seen
	}{
		"the first segment picks the task": {
			path: "/proxy/task-a/",
			want: seen{Backend: "a", Method: "GET", Path: "/proxy/task-a/"},
		},
		"another task goes to its own service": {
			path: "/proxy/task-b/tree",
			want: seen{Backend: "b", Method: "GET", Path: "/proxy/task-b/tree"},
		},
		"the path and query go through unchanged": {
			path: "/proxy/task-a/lab/api/kernels?token=abc&x=a%20b",
			want: seen{Backend: "a", Method: "GET", Path: "/proxy/task-a/lab/api/kernels", Query: "token=abc&x=a%20b"},
		},
		"escaped slashes stay escaped": {
			path: "/proxy/task-a/api/contents/dir%2Ffile.ipynb",
			want: seen{Backend: "a", Method: "GET", Path: "/proxy/task-a/api/contents/dir/file.ipynb",
				RawPath: "/proxy/task-a/api/contents/dir%2Ffile.ipynb"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, body := get(t, srv.URL+tc.path, "")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			var got seen
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			tc.want.Host, tc.want.XFHost, tc.want.XFProto = host, host, "http"
			tc.want.XFF, tc.want.XRealIP = "127.0.0.1", "127.0.0.1"
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("backend saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBodiesAndMethodsGoThrough(t *testing.T) {
	a := echoBackend(t, "a")
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, a.URL), State: proxy.Ready}}.lookup))
	res, err := http.Post(srv.URL+"/proxy/t/api/contents", "application/json", strings.NewReader(`{"type":"notebook"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got seen
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Method != "POST" || got.Body != `{"type":"notebook"}` {
		t.Errorf("backend saw %s with body %q", got.Method, got.Body)
	}
}

func TestTaskRootRedirectsToSlash(t *testing.T) {
	srv := serve(t, proxy.New(tasks{}.lookup))
	res, _ := get(t, srv.URL+"/proxy/t1?token=x", "")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/proxy/t1/?token=x" {
		t.Errorf("got %d to %q, want 302 to /proxy/t1/?token=x", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestStates(t *testing.T) {
	srv := serve(t, proxy.New(tasks{
		"starting": {State: proxy.Starting, URL: mustURL(t, "http://127.0.0.1:1")},
		"ended":    {State: proxy.Ended, EndedState: "TERMINATED"},
	}.lookup))
	tests := map[string]struct {
		path, accept string
		status       int
		contains     []string
		retryAfter   string
	}{
		"a browser waits on a page that reloads itself": {
			path: "/proxy/starting/lab", accept: "text/html,application/xhtml+xml,*/*;q=0.8",
			status: 200, retryAfter: "2",
			contains: []string{`<meta http-equiv="refresh" content="2">`, "Task starting is starting…"},
		},
		"an API client gets 503 with Retry-After in JSON": {
			path: "/proxy/starting/api/kernels", accept: "application/json",
			status: 503, retryAfter: "2",
			contains: []string{`"code":"unavailable"`, `"message":"task starting is starting"`},
		},
		"another client gets 503 with Retry-After": {
			path: "/proxy/starting/", accept: "*/*", status: 503, retryAfter: "2",
			contains: []string{"task starting is starting"},
		},
		"an ended task is gone": {
			path: "/proxy/ended/", accept: "text/html", status: 410,
			contains: []string{"task ended ended: TERMINATED"},
		},
		"an ended task is gone in JSON": {
			path: "/proxy/ended/api", accept: "application/json", status: 410,
			contains: []string{`{"error":{"code":"gone","message":"task ended ended: TERMINATED"}}`},
		},
		"an unknown task is not found in JSON": {
			path: "/proxy/nope/api", accept: "application/json", status: 404,
			contains: []string{`{"error":{"code":"not_found","message":"task nope not found"}}`},
		},
		"an unknown task is not found on a page": {
			path: "/proxy/nope/", accept: "text/html", status: 404,
			contains: []string{"<h1>404 Not Found</h1>", "task nope not found"},
		},
		"a path without a task is not found": {
			path: "/proxy/", accept: "application/json", status: 404,
			contains: []string{"no task ID in path /proxy/"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, body := get(t, srv.URL+tc.path, tc.accept)
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			if got := res.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			for _, s := range tc.contains {
				if !strings.Contains(body, s) {
					t.Errorf("body does not contain %q:\n%s", s, body)
				}
			}
		})
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	a := echoBackend(t, "a")
	authorize := func(r *http.Request, t proxy.Target) error {
		switch r.Header.Get("Authorization") {
		case "":
			return resolute.Errorf(resolute.EUnauthorized, "sign in to open task %s", proxy.TaskID(r))
		case "bearer owner":
			return nil
		}
		return resolute.Errorf(resolute.EForbidden, "task belongs to user %d", t.Owner)
	}
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, a.URL), State: proxy.Ready, Owner: 7}}.lookup,
		proxy.WithAuthorize(authorize)))
	tests := map[string]struct {
		auth   string
		status int
		body   string
	}{
		"no credentials is unauthorized": {"", 401, `{"error":{"code":"unauthorized","message":"sign in to open task t"}}`},
		"another user is forbidden":      {"bearer other", 403, `{"error":{"code":"forbidden","message":"task belongs to user 7"}}`},
		"the owner goes through":         {"bearer owner", 200, `"Backend":"a"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/proxy/t/x", nil)
			req.Header.Set("Accept", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Errorf("got %d %s, want %d containing %s", res.StatusCode, body, tc.status, tc.body)
			}
		})
	}
}

func TestErrorHandlerTakesOver(t *testing.T) {
	var got []string
	srv := serve(t, proxy.New(tasks{}.lookup, proxy.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		got = append(got, resolute.ErrorCode(err)+": "+resolute.ErrorMessage(err))
		w.WriteHeader(http.StatusTeapot)
	})))
	res, _ := get(t, srv.URL+"/proxy/x/", "")
	if res.StatusCode != http.StatusTeapot || len(got) != 1 || got[0] != "not_found: task x not found" {
		t.Errorf("got %d and %q", res.StatusCode, got)
	}
}

func TestBackendDownIsBadGateway(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, "http://"+addr), State: proxy.Ready}}.lookup))
	res, body := get(t, srv.URL+"/proxy/t/lab", "application/json")
	want := `{"error":{"code":"bad_gateway","message":"the service of task t is not answering (connection refused); it may still be starting or may have stopped"}}`
	if res.StatusCode != http.StatusBadGateway || strings.TrimSpace(body) != want {
		t.Errorf("got %d %s", res.StatusCode, body)
	}
	if strings.Contains(body, addr) {
		t.Errorf("the answer shows the internal address %s", addr)
	}
}

func TestStripCookies(t *testing.T) {
	a := echoBackend(t, "a")
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, a.URL), State: proxy.Ready}}.lookup,
		proxy.WithStripCookies("resolute_session")))
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/proxy/t/", nil)
	req.Header.Set("Cookie", "_xsrf=abc; resolute_session=secret; username-127-0-0-1=x")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got seen
	json.NewDecoder(res.Body).Decode(&got)
	if got.Cookie != "_xsrf=abc; username-127-0-0-1=x" {
		t.Errorf("backend got cookies %q", got.Cookie)
	}
}

func TestHTTPActivity(t *testing.T) {
	a := echoBackend(t, "a")
	clk := newClock()
	p := proxy.New(tasks{
		"t":        {URL: mustURL(t, a.URL), State: proxy.Ready},
		"starting": {State: proxy.Starting},
	}.lookup, proxy.WithClock(clk.now))
	srv := serve(t, p)
	if got := p.LastActivity("t"); !got.IsZero() {
		t.Fatalf("activity before any request: %v", got)
	}
	for i := range 3 {
		want := clk.advance(time.Minute)
		get(t, fmt.Sprintf("%s/proxy/t/%d", srv.URL, i), "")
		if got := p.LastActivity("t"); !got.Equal(want) {
			t.Errorf("after request %d: activity %v, want %v", i, got, want)
		}
	}
	get(t, srv.URL+"/proxy/starting/", "text/html")
	if got := p.LastActivity("starting"); !got.IsZero() {
		t.Errorf("the waiting page counted as activity: %v", got)
	}
	p.Forget("t")
	if got := p.LastActivity("t"); !got.IsZero() {
		t.Errorf("activity after Forget: %v", got)
	}
}
