package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// noRedirects is a client of a browser that the test walks through
// redirects by hand, with a cookie jar.
func noRedirects(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ticketURL asks the API for a link that opens task id, as det does.
func ticketURL(t *testing.T, m *handlerstest.Master, token, id string) string {
	t.Helper()
	var open resolute.OpenTaskResponse
	if code := api(t, m, "POST", "/api/v1/tasks/"+id+"/open", token, "", &open); code != 200 || open.URL == "" {
		t.Fatalf("open %s: %d %+v", id, code, open)
	}
	return open.URL
}

// openTask redeems a ticket of the token's user for task id on the task
// origin, as a browser does, and returns the browser: its cookie jar holds
// the task cookie and nothing of the master's.
func openTask(t *testing.T, m *handlerstest.Master, token, id string) *http.Client {
	t.Helper()
	c := noRedirects(t)
	resp, err := c.Get(ticketURL(t, m, token, id))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/proxy/"+id+"/" {
		t.Fatalf("redeem a ticket of %s: %d to %q", id, resp.StatusCode, resp.Header.Get("Location"))
	}
	return c
}

// taskDo sends a request to the task origin with c and returns the status
// and the body; header is added to the request.
func taskDo(t *testing.T, c *http.Client, m *handlerstest.Master, method, path, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, m.TasksURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c == nil {
		c = noRedirects(t)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// hostileService stands in for the `tensorboard` program with user code
// that attacks whoever views it: every answer tries to set the master's
// session cookie (for the task origin, for the master's host name, with
// a longer path), the task origin's own cookie and a nameless cookie that
// a browser would send as "auth=...", besides a cookie of its own; the
// body tells what the request brought to the service.
const hostileService = `#!/usr/bin/python3
import argparse, http.server, json

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--path_prefix", default="")
p.add_argument("--logdir", default="")
p.add_argument("--logdir_spec", default="")
a, _ = p.parse_known_args()

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = json.dumps({"path": self.path, "cookie": self.headers.get("Cookie", ""),
                        "authorization": self.headers.get("Authorization", "")}).encode()
        self.send_response(200)
        for c in ["auth=planted; Path=/", "auth=planted; Path=/api/v1; Domain=localhost",
                  "resolute_task=planted; Path=" + a.path_prefix + "/", "=auth=nameless; Path=/",
                  "mine=kept; Path=" + a.path_prefix + "/"]:
            self.send_header("Set-Cookie", c)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer((a.host, a.port), Handler)
print("TensorBoard 2.x at http://%s:%d%s/ (Press CTRL+C to quit)" % (a.host, a.port, a.path_prefix), flush=True)
srv.serve_forever()
`

// hostileTask launches the hostile service as a TensorBoard of token's user
// over a paused experiment and waits until it serves.
func hostileTask(t *testing.T, m *handlerstest.Master, token, config string) resolute.Task {
	t.Helper()
	dir := handlerstest.TempDir(t) // tasks run as their owners' Unix users, who must reach it
	if err := os.WriteFile(filepath.Join(dir, "tensorboard"), []byte(hostileService), 0o755); err != nil {
		t.Fatal(err)
	}
	exp := createExperiment(t, m, token, false)
	return readyTensorBoard(t, m, token, resolute.CreateTaskRequest{ExperimentIDs: []int64{exp},
		Config: config + "environment: {environment_variables: [\"PATH=" + dir + ":/usr/local/bin:/usr/bin:/bin\"]}\n"})
}

// seenByService is what the hostile service tells of a request.
type seenByService struct {
	Path, Cookie, Authorization string
}

func TestTheTaskOriginKeepsTheMastersSessionAwayFromTasks(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := hostileTask(t, m, admin, "")
	if task.ServiceAddress != "/tasks/"+task.ID+"/open" || task.ServiceURL != m.TasksURL+"/proxy/"+task.ID+"/" {
		t.Fatalf("addresses %q and %q", task.ServiceAddress, task.ServiceURL)
	}
	browser := openTask(t, m, admin, task.ID)
	tasks, _ := url.Parse(m.TasksURL + "/proxy/" + task.ID + "/")

	// Twice: the second request brings what the first one's cookies left.
	for i := range 2 {
		resp, body := taskDo(t, browser, m, "GET", "/proxy/"+task.ID+"/page",
			"", http.Header{"Authorization": {"Bearer " + admin}})
		var seen seenByService
		if err := json.Unmarshal([]byte(body), &seen); resp.StatusCode != 200 || err != nil {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		if seen.Authorization != "" || strings.Contains(seen.Cookie, "resolute_task") || strings.Contains(seen.Cookie, "auth") {
			t.Errorf("request %d: the service saw credentials: %+v", i, seen)
		}
		if i == 1 && seen.Cookie != "mine=kept" {
			t.Errorf("the service's own cookie did not come back: %q", seen.Cookie)
		}
		if got := resp.Header.Values("Set-Cookie"); len(got) != 1 || !strings.HasPrefix(got[0], "mine=kept") {
			t.Errorf("request %d: Set-Cookie that reached the browser: %q, want only mine=kept", i, got)
		}
	}
	names := map[string]int{}
	for _, c := range browser.Jar.Cookies(tasks) {
		names[c.Name]++
	}
	if names["auth"] != 0 || names[handlers.TaskCookieName] != 1 || names["mine"] != 1 || len(names) != 2 {
		t.Errorf("the browser's cookies on the task origin: %v", names)
	}

	// The master's session opens nothing on the task origin: as a bearer
	// token, nor as the master's cookie.
	for name, h := range map[string]http.Header{
		"a bearer token":      {"Authorization": {"Bearer " + admin}},
		"the master's cookie": {"Cookie": {"auth=" + admin}},
		"nothing":             {},
	} {
		if resp, body := taskDo(t, nil, m, "GET", "/proxy/"+task.ID+"/page", "", h); resp.StatusCode != 401 {
			t.Errorf("%s on the task origin: %d %s, want 401", name, resp.StatusCode, body)
		}
	}
	// A browser without the task cookie goes to the master's open route,
	// for the page it asked for.
	resp, _ := taskDo(t, nil, m, "GET", "/proxy/"+task.ID+"/data/plugins?tag=a", "", http.Header{"Accept": {"text/html"}})
	if want := m.URL + "/tasks/" + task.ID + "/open?path=" + url.QueryEscape("data/plugins?tag=a"); resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Errorf("a page without the task cookie: %d to %q, want 303 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// Everything else the task origin is asked goes to the master.
	for _, method := range []string{"GET", "POST", "PATCH"} {
		resp, _ := taskDo(t, browser, m, method, "/api/v1/users/1", `{"admin":true}`, nil)
		if resp.StatusCode != 302 || resp.Header.Get("Location") != m.URL+"/api/v1/users/1" {
			t.Errorf("%s /api/v1/users/1 on the task origin: %d to %q", method, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestATicketIsUsedOnceAndBoundToItsTaskAndUser(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{SecureCookies: true})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"alice"},"password":"pw-secret1"}`, nil)
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"pw-secret1"}`, nil)
	alice, bob := login(t, m, "alice", "pw-secret1"), login(t, m, "bob", "pw-secret1")
	alices, bobs := hostileTask(t, m, alice, ""), hostileTask(t, m, bob, "")

	// The cookie: HttpOnly, for this task's path alone, Lax, Secure under
	// TLS (which this master plays: a cookie jar would not send it over
	// http, so the test sends it by hand).
	link := ticketURL(t, m, alice, alices.ID)
	resp, _ := taskDo(t, nil, m, "GET", strings.TrimPrefix(link, m.TasksURL), "", nil)
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != handlers.TaskCookieName || cookies[0].Path != "/proxy/"+alices.ID+"/" ||
		!cookies[0].HttpOnly || !cookies[0].Secure || cookies[0].SameSite != http.SameSiteLaxMode || cookies[0].Expires.IsZero() {
		t.Fatalf("the task cookie: %q", resp.Header.Values("Set-Cookie"))
	}
	if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the redemption may be cached or leak its ticket: %v", resp.Header)
	}
	aliceCookie := withCookie(cookies[0])
	if resp, body := taskDo(t, nil, m, "GET", "/proxy/"+alices.ID+"/", "", aliceCookie); resp.StatusCode != 200 {
		t.Fatalf("alice's own task with her cookie: %d %s", resp.StatusCode, body)
	}
	// Used once.
	if resp, body := taskDo(t, nil, m, "GET", strings.TrimPrefix(link, m.TasksURL), "", nil); resp.StatusCode != 401 ||
		!strings.Contains(body, "expired or was used already") || len(resp.Cookies()) != 0 {
		t.Fatalf("the same ticket again: %d %s", resp.StatusCode, body)
	}
	// Bound to its task: alice's cookie does not open bob's task, at any
	// path, even sent by hand.
	for _, path := range []string{"/proxy/" + bobs.ID + "/", "/proxy/" + bobs.ID + "/proxy/" + alices.ID + "/"} {
		if resp, body := taskDo(t, nil, m, "GET", path, "", aliceCookie); resp.StatusCode != 401 {
			t.Errorf("alice's cookie of %s at %s: %d %s", alices.ID, path, resp.StatusCode, body)
		}
	}
	// Bound to its user: bob gets no ticket for alice's task, on the API or
	// the page; his own cookie does not open hers.
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/tasks/"+alices.ID+"/open", bob, "", &e); code != 403 {
		t.Errorf("bob's ticket for alice's task: %d %+v", code, e)
	}
	bobPages := signInPages(t, m, "bob", "pw-secret1")
	if resp, _ := get(t, bobPages, m, "/tasks/"+alices.ID+"/open"); resp.StatusCode != 403 {
		t.Errorf("bob opens alice's task from the page: %d", resp.StatusCode)
	}
	bobCookie := withCookie(redeem(t, m, ticketURL(t, m, bob, bobs.ID)))
	if resp, _ := taskDo(t, nil, m, "GET", "/proxy/"+bobs.ID+"/", "", bobCookie); resp.StatusCode != 200 {
		t.Fatalf("bob's own task: %d", resp.StatusCode)
	}
	if resp, body := taskDo(t, nil, m, "GET", "/proxy/"+alices.ID+"/", "", bobCookie); resp.StatusCode != 401 {
		t.Errorf("bob's cookie on alice's task: %d %s", resp.StatusCode, body)
	}
	// An administrator opens alice's task; signing out of the master ends
	// the task cookie too.
	adminCookie := withCookie(redeem(t, m, ticketURL(t, m, admin, alices.ID)))
	if resp, _ := taskDo(t, nil, m, "GET", "/proxy/"+alices.ID+"/", "", adminCookie); resp.StatusCode != 200 {
		t.Fatalf("the administrator on alice's task: %d", resp.StatusCode)
	}
	if code := api(t, m, "POST", "/api/v1/auth/logout", admin, "", nil); code != 200 {
		t.Fatalf("logout: %d", code)
	}
	if resp, _ := taskDo(t, nil, m, "GET", "/proxy/"+alices.ID+"/", "", adminCookie); resp.StatusCode != 401 {
		t.Errorf("after the administrator signed out: %d, want 401", resp.StatusCode)
	}
}

// redeem follows a ticket link and returns the task cookie it sets.
func redeem(t *testing.T, m *handlerstest.Master, link string) *http.Cookie {
	t.Helper()
	resp, body := taskDo(t, nil, m, "GET", strings.TrimPrefix(link, m.TasksURL), "", nil)
	for _, c := range resp.Cookies() {
		if c.Name == handlers.TaskCookieName {
			return c
		}
	}
	t.Fatalf("redeem %s: %d %s", link, resp.StatusCode, body)
	return nil
}

func withCookie(c *http.Cookie) http.Header {
	return http.Header{"Cookie": {c.Name + "=" + c.Value}}
}

// TestTheMasterOpensTasksOnlyThroughTheTaskOrigin: old /proxy/ links on
// the master go, signed in or not, through the open route to the same page
// on the task origin; the master proxies nothing itself.
func TestTheMasterOpensTasksOnlyThroughTheTaskOrigin(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := hostileTask(t, m, admin, "")
	c := noRedirects(t)
	old := "/proxy/" + task.ID + "/data/runs?x=1"
	resp, _ := get(t, c, m, old)
	if want := "/tasks/" + task.ID + "/open?path=" + url.QueryEscape("data/runs?x=1"); resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Fatalf("an old link: %d to %q, want %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	open := resp.Header.Get("Location")
	resp, _ = get(t, c, m, open)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/login?redirect=") {
		t.Fatalf("the open route without a session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	pages := signInPages(t, m, "admin", "")
	pages.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, _ = get(t, pages, m, open)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), m.TasksURL+"/redeem?ticket=") {
		t.Fatalf("the open route: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err := pages.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/proxy/"+task.ID+"/data/runs?x=1" {
		t.Fatalf("the redemption: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := taskDo(t, pages, m, "GET", resp.Header.Get("Location"), "", nil)
	var seen seenByService
	if json.Unmarshal([]byte(body), &seen); resp.StatusCode != 200 || seen.Path != "/proxy/"+task.ID+"/data/runs?x=1" {
		t.Fatalf("the page: %d %s", resp.StatusCode, body)
	}
	// The master proxies nothing: other methods are not allowed.
	if code := api(t, m, "POST", "/proxy/"+task.ID+"/data", admin, "{}", nil); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST through the master's /proxy/: %d", code)
	}
}

// TestAWebsocketFromAnotherOriginIsRefusedOnBothOrigins: the task origin
// refuses a websocket that a page of the master (or any other) opens to a
// task, and the master refuses a terminal websocket opened by a page of the
// task origin, each with 403 and why.
func TestAWebsocketFromAnotherOriginIsRefusedOnBothOrigins(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := hostileTask(t, m, admin, "")
	browser := openTask(t, m, admin, task.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ws := "ws" + strings.TrimPrefix(m.TasksURL, "http") + "/proxy/" + task.ID + "/api/kernels/k/channels"
	for _, origin := range []string{m.URL, "http://evil.example"} {
		_, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: browser, HTTPHeader: http.Header{"Origin": {origin}}})
		if resp == nil || resp.StatusCode != 403 {
			t.Fatalf("a websocket to a task from %s: %v %v", origin, resp, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "cross-origin websocket refused: a page of "+origin) {
			t.Errorf("the refusal does not say why: %s", body)
		}
	}
	// From the task origin itself it reaches the service (which speaks no
	// websocket).
	_, resp, _ := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: browser, HTTPHeader: http.Header{"Origin": {m.TasksURL}}})
	if resp == nil || resp.StatusCode == 403 || resp.StatusCode == 401 {
		t.Fatalf("a websocket from the task origin: %v", resp)
	}

	var shell resolute.TaskResponse
	api(t, m, "POST", "/api/v1/shells", admin, jsonBody(resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"}), &shell)
	term := "ws" + strings.TrimPrefix(m.URL, "http") + "/tasks/" + shell.Task.ID + "/terminal/ws"
	for _, origin := range []string{m.TasksURL, "http://evil.example"} {
		_, resp, err := websocket.Dial(ctx, term, &websocket.DialOptions{HTTPHeader: http.Header{
			"Authorization": {"Bearer " + admin}, "Origin": {origin}}})
		if resp == nil || resp.StatusCode != 403 {
			t.Fatalf("a terminal websocket from %s: %v %v", origin, resp, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "cross-origin websocket refused: a page of "+origin) {
			t.Errorf("the terminal's refusal does not say why: %s", body)
		}
	}
}

// TestTrafficOnTheTaskOriginKeepsATaskFromIdling: a TensorBoard with a 3 s
// idle_timeout stays up while a browser asks it something every second on
// the task origin, and goes once the browser stops.
func TestTrafficOnTheTaskOriginKeepsATaskFromIdling(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := hostileTask(t, m, admin, "idle_timeout: 3s\n")
	browser := openTask(t, m, admin, task.ID)
	for i := range 7 {
		if resp, body := taskDo(t, browser, m, "GET", fmt.Sprintf("/proxy/%s/tick-%d", task.ID, i), "", nil); resp.StatusCode != 200 {
			t.Fatalf("tick %d: %d %s", i, resp.StatusCode, body)
		}
		time.Sleep(time.Second)
	}
	if cur, _ := m.DB.Task(context.Background(), task.ID); cur.State != resolute.TaskRunning {
		t.Fatalf("a TensorBoard in use was stopped after 7 s with a 3 s idle_timeout: %s\n%s", cur.State,
			fetchLogs(t, m, admin, "/api/v1/tasks/"+task.ID+"/logs"))
	}
	quiet := time.Now()
	end := waitTask(t, m, admin, task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if end.State != resolute.TaskTerminated || time.Since(quiet) < 2*time.Second {
		t.Fatalf("a quiet TensorBoard: %s after %v", end.State, time.Since(quiet))
	}
}

// TestOnlyTheMastersOwnPagesOpenATask: a navigation to the open route
// from a page of another site (say a task's page on the task origin, which
// would then reach the task it made the viewer's browser open) gets no
// ticket but a page with the link to click; one from the master's pages,
// or typed, does.
func TestOnlyTheMastersOwnPagesOpenATask(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	task := hostileTask(t, m, admin, "")
	pages := signInPages(t, m, "admin", "")
	pages.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	open := "/tasks/" + task.ID + "/open?path=" + url.QueryEscape("data/runs")
	for site, ticket := range map[string]bool{"": true, "none": true, "same-origin": true, "same-site": false, "cross-site": false} {
		req, _ := http.NewRequest("GET", m.URL+open, nil)
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := pages.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		gotTicket := resp.StatusCode == 303 && strings.HasPrefix(resp.Header.Get("Location"), m.TasksURL+"/redeem?ticket=")
		if gotTicket != ticket {
			t.Errorf("Sec-Fetch-Site %q: %d to %q, want a ticket: %v", site, resp.StatusCode, resp.Header.Get("Location"), ticket)
		}
		if !ticket && (resp.StatusCode != 403 || !strings.Contains(string(body), "came from another site") ||
			!strings.Contains(string(body), `id="error-next" href="`+html.EscapeString(open)+`"`)) {
			t.Errorf("Sec-Fetch-Site %q: %d, want 403 saying why with the link to click:\n%s", site, resp.StatusCode, body)
		}
	}
}
