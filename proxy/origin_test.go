package proxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute/proxy"
)

// TestTheServicesCookiesForTheMastersNamesAreDropped: a service (user code)
// answers with Set-Cookie for the master's session cookie, the proxy's own
// cookie and a nameless one that a browser would send as "auth=..."; only
// its own cookies reach the browser, on pages and on websocket upgrades.
func TestTheServicesCookiesForTheMastersNamesAreDropped(t *testing.T) {
	evil := []string{
		"auth=stolen-session; Path=/; HttpOnly",
		"auth=x; Domain=localhost; Path=/api",
		" auth =spaced; Path=/",
		"resolute_task=forged; Path=/proxy/t/",
		"=auth=nameless; Path=/",
		"auth",
	}
	kept := []string{"username-127-0-0-1=jupyter; Path=/proxy/t/", "_xsrf=2|abc; Path=/proxy/t/"}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, c := range append(append([]string{}, evil...), kept...) {
			w.Header().Add("Set-Cookie", c)
		}
		if proxy.IsWebSocket(r) {
			c, err := websocket.Accept(w, r, nil)
			if err == nil {
				c.Close(websocket.StatusNormalClosure, "")
			}
			return
		}
		w.Write([]byte("page"))
	}))
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup,
		proxy.WithDropSetCookies("auth", "resolute_task")))

	res, body := get(t, srv.URL+"/proxy/t/page", "text/html")
	if res.StatusCode != 200 || body != "page" {
		t.Fatalf("page: %d %q", res.StatusCode, body)
	}
	if got := res.Header.Values("Set-Cookie"); !slices.Equal(got, kept) {
		t.Errorf("Set-Cookie of a page: %q, want only %q", got, kept)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, ws, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/proxy/t/api/kernels/k/channels", nil)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	c.CloseNow()
	if got := ws.Header.Values("Set-Cookie"); !slices.Equal(got, kept) {
		t.Errorf("Set-Cookie of a websocket upgrade: %q, want only %q", got, kept)
	}
}

// TestAWebsocketFromAnotherOriginIsRefused opens a websocket through the
// proxy as browsers do: from a page of the same origin it opens; from any
// other (another port, another host, the master's, a sandboxed "null") the
// proxy answers 403 without reaching the service.
func TestAWebsocketFromAnotherOriginIsRefused(t *testing.T) {
	var reached atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		// Trusts anyone: the proxy alone must refuse.
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}))
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))
	host := strings.TrimPrefix(srv.URL, "http://")
	wsURL := "ws://" + host + "/proxy/t/api/kernels/k/channels"

	tests := map[string]struct {
		header http.Header
		status int
	}{
		"a page of the task origin":          {http.Header{"Origin": {"http://" + host}}, 101},
		"a fetch-metadata same-origin page":  {http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}}, 101},
		"a client that is not a browser":     {http.Header{}, 101},
		"the master's origin":                {http.Header{"Origin": {"http://localhost:8080"}}, 403},
		"the same host on another port":      {http.Header{"Origin": {"http://127.0.0.1:1"}}, 403},
		"a sandboxed page":                   {http.Header{"Origin": {"null"}}, 403},
		"a same-site page by fetch metadata": {http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-site"}}, 403},
		"a cross-site page without Origin":   {http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := reached.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: tc.header})
			if c != nil {
				c.CloseNow()
			}
			if res == nil {
				t.Fatalf("no answer: %v", err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%v)", res.StatusCode, tc.status, err)
			}
			if tc.status == 403 && reached.Load() != before {
				t.Errorf("the refused websocket reached the service")
			}
		})
	}

	// The refusal says why, to a browser and to a script.
	req, _ := http.NewRequest("GET", srv.URL+"/proxy/t/api/kernels/k/channels", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	if res.StatusCode != 403 || !strings.Contains(b.String(), "cross-origin websocket refused: a page of http://evil.example may not open one to "+host) {
		t.Errorf("refusal: %d %s", res.StatusCode, b.String())
	}
}

// TestAChangeFromAnotherOriginIsRefused: a request that may change
// something (POST, PUT, PATCH, DELETE) sent by a page of another origin,
// such as another task's host under the same domain (one site, whose
// SameSite cookies go along), is refused before it reaches the service;
// the task's own pages and clients that are not browsers pass, and so do
// reads, which the browser keeps from the other page by itself.
func TestAChangeFromAnotherOriginIsRefused(t *testing.T) {
	var reached atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte("done"))
	}))
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))
	host := strings.TrimPrefix(srv.URL, "http://")
	other := "http://notebook-2.tasks.example.com"

	tests := map[string]struct {
		method string
		header http.Header
		status int
	}{
		"a POST of the task's own page":              {"POST", http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}}, 200},
		"a PUT of the task's own page, by Origin":    {"PUT", http.Header{"Origin": {"http://" + host}}, 200},
		"a DELETE of a client that is not a browser": {"DELETE", http.Header{}, 200},
		"a GET of another task's page":               {"GET", http.Header{"Origin": {other}, "Sec-Fetch-Site": {"same-site"}}, 200},
		"a POST of another task's page":              {"POST", http.Header{"Origin": {other}, "Sec-Fetch-Site": {"same-site"}}, 403},
		"a PATCH of another task's page, by Origin":  {"PATCH", http.Header{"Origin": {other}}, 403},
		"a form of a sandboxed page":                 {"POST", http.Header{"Origin": {"null"}, "Sec-Fetch-Site": {"cross-site"}}, 403},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := reached.Load()
			req, _ := http.NewRequest(tc.method, srv.URL+"/proxy/t/api/contents/x", strings.NewReader("{}"))
			req.Header = tc.header
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			if tc.status == 403 {
				if reached.Load() != before {
					t.Errorf("the refused request reached the service")
				}
				if want := "cross-origin request refused: a page of " + tc.header.Get("Origin") + " may not " + tc.method + " to " + host; !strings.Contains(string(body), want) {
					t.Errorf("the refusal does not say why: %s", body)
				}
			}
		})
	}
}
