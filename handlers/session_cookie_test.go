package handlers_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// withCookies sends method path with the raw Cookie header cookies, as a
// browser holding them would, and returns the status and body.
func withCookies(t *testing.T, m *handlerstest.Master, method, path, cookies, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, m.URL+path, strings.NewReader(body))
	req.Header.Set("Cookie", cookies)
	if method == "POST" && strings.HasPrefix(body, "username=") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTwoSessionCookiesSignNobodyIn plays a page of another host of the
// master's domain that set a second session cookie (mallory's, for a longer
// path, which the browser sends first): the request counts as no session
// at all, so the administrator acts as nobody rather than as mallory, and
// the pages say what to do.
func TestTwoSessionCookiesSignNobodyIn(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"mallory"},"password":"mallory-pw1"}`, nil)
	mallory := login(t, m, "mallory", "mallory-pw1")
	tossed := "auth=" + mallory + "; auth=" + admin

	code, body := withCookies(t, m, "GET", "/api/v1/me", tossed, "")
	if code != 401 || !strings.Contains(body, "more than one session cookie") {
		t.Fatalf("GET /api/v1/me with two session cookies: %d %s", code, body)
	}
	if code, _ := withCookies(t, m, "POST", "/api/v1/workspaces", tossed, `{"name":"as-whom"}`); code != 401 {
		t.Errorf("a change with two session cookies: %d, want 401", code)
	}
	if code, body := withCookies(t, m, "GET", "/login", tossed, ""); code != 200 || !strings.Contains(body, "more than one session cookie") {
		t.Errorf("the login page does not say why: %d", code)
	}
	if code, body := withCookies(t, m, "POST", "/login", tossed, url.Values{"username": {"admin"}, "password": {""}}.Encode()); code != 409 ||
		!strings.Contains(body, "clear this site") {
		t.Errorf("signing in with two session cookies: %d, want 409 saying what to do", code)
	}
	var ws resolute.WorkspacesResponse
	api(t, m, "GET", "/api/v1/workspaces", admin, "", &ws)
	for _, w := range ws.Workspaces {
		if w.Name == "as-whom" {
			t.Errorf("a workspace was made by %s", w.Username)
		}
	}

	// One cookie, either of them, is a session as before.
	if code, body := withCookies(t, m, "GET", "/api/v1/me", "auth="+admin, ""); code != 200 || !strings.Contains(body, `"username":"admin"`) {
		t.Errorf("one session cookie: %d %s", code, body)
	}
}

// TestOverHTTPSTheSessionCookieIsHostOnly: under TLS the session cookie is
// __Host-auth (Secure, Path=/, no Domain), which no other host can set, and
// a plain auth cookie, which another host of the domain could, is no
// session.
func TestOverHTTPSTheSessionCookieIsHostOnly(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{SecureCookies: true})
	resp, _ := post(t, browserClient(t), m, "/login", url.Values{"username": {"admin"}, "password": {""}})
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == "__Host-auth" {
			c = k
		}
	}
	if resp.StatusCode != 303 || c == nil || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" {
		t.Fatalf("login over HTTPS: %d, session cookie %+v of %v", resp.StatusCode, c, resp.Cookies())
	}
	if code, _ := withCookies(t, m, "GET", "/api/v1/me", "auth="+c.Value, ""); code != 401 {
		t.Errorf("a plain auth cookie over HTTPS: %d, want 401", code)
	}
	if code, _ := withCookies(t, m, "GET", "/api/v1/me", "__Host-auth="+c.Value, ""); code != 200 {
		t.Errorf("the __Host-auth cookie: %d, want 200", code)
	}
}
