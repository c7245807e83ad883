package handlers_test

import (
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestTheMastersAnswersCarryTheSecurityHeaders(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	want := map[string]string{
		"Content-Security-Policy": handlers.ContentSecurityPolicy,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "strict-origin-when-cross-origin",
	}
	for _, path := range []string{"/login", "/dashboard", "/experiments", "/admin/users", "/static/app.js",
		"/api/v1/me", "/no/such/page", "/health"} {
		resp, _ := get(t, c, m, path)
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s (%d): %s = %q, want %q", path, resp.StatusCode, k, got, v)
			}
		}
	}
	for _, directive := range []string{"script-src 'self';", "frame-ancestors 'none'", "object-src 'none'", "form-action 'self'", "base-uri 'self'"} {
		if !strings.Contains(handlers.ContentSecurityPolicy, directive) {
			t.Errorf("the policy lacks %s", directive)
		}
	}
	// A refusal carries them too.
	resp, _ := post(t, c, m, "/workspaces", url.Values{"name": {"x"}}, "Sec-Fetch-Site", "cross-site")
	if resp.StatusCode != 403 || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("a refused request: %d, X-Frame-Options %q", resp.StatusCode, resp.Header.Get("X-Frame-Options"))
	}
	// What the task origin answers (a task's service, through the proxy)
	// is not the master's to constrain.
	resp, err := c.Get(m.TasksURL + "/proxy/notebook-404/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("the task origin's answer got the master's policy")
	}
}

func TestChangesSentFromAnotherOriginAreRefused(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	pages := signInPages(t, m, "admin", "")
	taskOrigin := "http://127.0.0.1:1" // any other origin: a task's, another site's
	same := m.URL
	tests := map[string]struct {
		headers []string
		refused bool
	}{
		"the CLI and the harness send neither header":           {},
		"a page of the master itself":                           {headers: []string{"Sec-Fetch-Site", "same-origin", "Origin", same}},
		"a bookmark or the address bar":                         {headers: []string{"Sec-Fetch-Site", "none"}},
		"an older browser on the master's own page":             {headers: []string{"Origin", same}},
		"a task's page on another port of the same host":        {headers: []string{"Sec-Fetch-Site", "same-site", "Origin", taskOrigin}, refused: true},
		"another site's page":                                   {headers: []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, refused: true},
		"an older browser on another site's page":               {headers: []string{"Origin", "https://evil.example"}, refused: true},
		"an older browser on a task's page on another port":     {headers: []string{"Origin", taskOrigin}, refused: true},
		"a sandboxed page, whose origin is null, of any origin": {headers: []string{"Sec-Fetch-Site", "cross-site", "Origin", "null"}, refused: true},
	}
	n := 0
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n++
			ws := "ws-" + itoa(int64(n))
			// The API, with the administrator's token.
			req, _ := http.NewRequest("POST", m.URL+"/api/v1/workspaces", strings.NewReader(`{"name":"`+ws+`-api"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A page's form, with the administrator's session cookie.
			form, page := post(t, pages, m, "/workspaces", url.Values{"name": {ws + "-page"}}, tc.headers...)
			if tc.refused {
				if resp.StatusCode != 403 || !strings.Contains(string(body), "cross-origin request refused") {
					t.Errorf("API: %d %s, want 403 cross-origin request refused", resp.StatusCode, body)
				}
				if form.StatusCode != 403 || !strings.Contains(page, "cross-origin request refused") || !strings.Contains(page, `id="error-page"`) {
					t.Errorf("form: %d, want the 403 error page", form.StatusCode)
				}
			} else if resp.StatusCode != 200 || form.StatusCode != 303 {
				t.Errorf("API %d %s, form %d; want 200 and 303", resp.StatusCode, body, form.StatusCode)
			}
		})
	}
	// Reading is not a change: another origin's GET goes through (the
	// session cookie is SameSite=Lax, and nothing changes).
	req, _ := http.NewRequest("GET", m.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("a cross-site GET: %v %v", resp, err)
	}
}

func TestLoginRedirectsOnlyToPathsOfThisSite(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	tests := map[string]struct{ redirect, want string }{
		"a path":                       {"/experiments?state=ACTIVE#top", "/experiments?state=ACTIVE#top"},
		"nothing":                      {"", "/dashboard"},
		"another host":                 {"//evil.example/x", "/dashboard"},
		"a tab that browsers drop":     {"/\t/evil.example", "/dashboard"},
		"a newline that browsers drop": {"/\n/evil.example", "/dashboard"},
		"a carriage return":            {"/\r/evil.example", "/dashboard"},
		"a backslash that browsers read as a slash":   {"/\\evil.example", "/dashboard"},
		"a backslash later":                           {"/experiments\\..\\x", "/dashboard"},
		"a scheme":                                    {"https://evil.example", "/dashboard"},
		"javascript":                                  {"javascript:alert(1)", "/dashboard"},
		"a leading space that browsers trim":          {" //evil.example", "/dashboard"},
		"a relative path":                             {"evil.example", "/dashboard"},
		"an escape":                                   {"/%2F/evil.example", "/dashboard"},
		"a slash then dots are a path here":           {"/./experiments", "/./experiments"},
		"spaces inside are a path":                    {"/search?q=a b", "/search?q=a b"},
		"a user and host after a path are still path": {"/a@evil.example", "/a@evil.example"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := browserClient(t)
			resp, _ := post(t, c, m, "/login", url.Values{"username": {"admin"}, "password": {""}, "redirect": {tc.redirect}})
			if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !sameLocation(loc, tc.want) {
				t.Errorf("POST /login: %d to %q, want %q", resp.StatusCode, loc, tc.want)
			}
			// Signed in, the login page sends one on at once.
			resp, _ = get(t, c, m, "/login?redirect="+url.QueryEscape(tc.redirect))
			if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !sameLocation(loc, tc.want) {
				t.Errorf("GET /login: %d to %q, want %q", resp.StatusCode, loc, tc.want)
			}
		})
	}
	// The experiment list's batch form goes back where its back field says,
	// by the same rule.
	c := signInPages(t, m, "admin", "")
	resp, _ := post(t, c, m, "/experiments/batch", url.Values{"action": {"archive"}, "back": {"/\t/evil.example"}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || loc != "/experiments" {
		t.Errorf("batch form: %d to %q, want /experiments", resp.StatusCode, loc)
	}
}

// sameLocation compares a Location header with the path it should name, as
// net/http writes it (cleaned, escaped).
func sameLocation(loc, want string) bool {
	if loc == want {
		return true
	}
	u, err := url.Parse(loc)
	w, err2 := url.Parse(want)
	return err == nil && err2 == nil && u.Host == "" && w.Host == "" && u.Path == strings.ReplaceAll(w.Path, "/./", "/")
}

func TestSharingAnAddressLocksNobodyOut(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	for _, u := range []string{"alice", "bob"} {
		if code := api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"`+u+`"},"password":"`+u+`-secret"}`, nil); code != 200 {
			t.Fatalf("create %s: %d", u, code)
		}
	}
	var e resolute.ErrorResponse
	for i := 0; i < 6; i++ {
		api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"alice","password":"guess"}`, &e)
	}
	if code := api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"alice","password":"alice-secret"}`, &e); code != 429 {
		t.Fatalf("alice after 6 failures: %d, want 429", code)
	}
	login(t, m, "bob", "bob-secret") // from the same address
	// Without a trusted proxy, X-Forwarded-For is anyone's to write and
	// changes nothing.
	if code := loginFrom(t, m, "alice", "alice-secret", "X-Forwarded-For", "203.0.113.9"); code != 429 {
		t.Errorf("alice claiming another address: %d, want 429", code)
	}
}

func TestATrustedProxySaysWhoTheClientIsAndThatItUsesHTTPS(t *testing.T) {
	tests := map[string]struct {
		proxies []netip.Prefix
		headers []string
		secure  bool
	}{
		"behind no trusted proxy the headers are ignored": {
			headers: []string{"X-Forwarded-Proto", "https"}},
		"from a trusted proxy, https makes the cookie Secure": {
			proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			headers: []string{"X-Forwarded-Proto", "https"}, secure: true},
		"from a trusted proxy, http does not": {
			proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			headers: []string{"X-Forwarded-Proto", "http"}},
		"another proxy's word is not taken": {
			proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			headers: []string{"X-Forwarded-Proto", "https"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := handlerstest.Start(t, handlerstest.Options{TrustedProxies: tc.proxies})
			req, _ := http.NewRequest("POST", m.URL+"/login", strings.NewReader("username=admin&password="))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			resp, err := browserClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(resp.Cookies()) != 1 || resp.Cookies()[0].Secure != tc.secure {
				t.Fatalf("cookies %v, want one with Secure %v", resp.Cookies(), tc.secure)
			}
			// The flash message after a form too.
			req, _ = http.NewRequest("POST", m.URL+"/workspaces", strings.NewReader("name=ws"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(resp.Cookies()[0])
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			resp, err = browserClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(resp.Cookies()) != 1 || resp.Cookies()[0].Name != "flash" || resp.Cookies()[0].Secure != tc.secure {
				t.Fatalf("after a form: %d, cookies %v, want the flash with Secure %v", resp.StatusCode, resp.Cookies(), tc.secure)
			}
		})
	}

	// The client's address for the throttle is the nearest one the proxy
	// did not write itself: what the client put further left is its own
	// claim.
	m := handlerstest.Start(t, handlerstest.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"alice"},"password":"alice-secret"}`, nil)
	for i := 0; i < 6; i++ {
		loginFrom(t, m, "alice", "guess", "X-Forwarded-For", "203.0.113.5")
	}
	for addr, want := range map[string]int{
		"203.0.113.5":               429, // where the failures came from
		"198.51.100.1, 203.0.113.5": 429, // the client's made-up hop changes nothing
		"203.0.113.6":               200, // alice elsewhere
		"203.0.113.5, 127.0.0.1":    429, // a chain of trusted proxies
	} {
		if code := loginFrom(t, m, "alice", "alice-secret", "X-Forwarded-For", addr); code != want {
			t.Errorf("alice from X-Forwarded-For %q: %d, want %d", addr, code, want)
		}
	}
}

// loginFrom logs in through the API with extra headers and returns the
// status.
func loginFrom(t *testing.T, m *handlerstest.Master, user, password string, headers ...string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL+"/api/v1/auth/login", strings.NewReader(`{"username":"`+user+`","password":"`+password+`"}`))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
