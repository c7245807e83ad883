package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// hostsBrowser is a browser (a cookie jar, redirects walked by hand) that
// reaches every *.localhost on the loopback, as Chromium and Firefox do.
func hostsBrowser(t *testing.T) *http.Client {
	t.Helper()
	c := noRedirects(t)
	c.Transport = handlerstest.LocalhostTransport()
	return c
}

// hostDo sends a request to u with c and returns the answer and its body;
// header is added to the request.
func hostDo(t *testing.T, c *http.Client, method, u, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestEveryTaskIsServedOnlyOnItsOwnHost: with tasks_url
// http://{task}.localhost:PORT the links name each task's own host; a
// ticket is redeemed there alone, into a host-only cookie; a request for
// one task on another's host (or on the shared origin's) is not found even
// with the right cookie, and a websocket or a change sent by a page of one
// task to another is refused.
func TestEveryTaskIsServedOnlyOnItsOwnHost(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{TaskHosts: true})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"alice"},"password":"pw-secret1"}`, nil)
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"pw-secret1"}`, nil)
	alice, bob := login(t, m, "alice", "pw-secret1"), login(t, m, "bob", "pw-secret1")
	a, b := hostileTask(t, m, alice, ""), hostileTask(t, m, bob, "")
	aOrigin, bOrigin := m.TaskOrigin(a.ID), m.TaskOrigin(b.ID)
	if !strings.HasPrefix(aOrigin, "http://"+a.ID+".localhost:") || aOrigin == bOrigin {
		t.Fatalf("the tasks' origins: %s and %s", aOrigin, bOrigin)
	}

	// The links name the task's own host.
	if a.ServiceURL != aOrigin+"/proxy/"+a.ID+"/" {
		t.Errorf("serviceUrl %q, want %s/proxy/%s/", a.ServiceURL, aOrigin, a.ID)
	}
	link := ticketURL(t, m, admin, a.ID)
	if !strings.HasPrefix(link, aOrigin+"/redeem?ticket=") {
		t.Errorf("the ticket link %q is not on %s", link, aOrigin)
	}
	pages := signInPages(t, m, "admin", "")
	pages.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if resp, _ := get(t, pages, m, "/tasks/"+b.ID+"/open"); resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), bOrigin+"/redeem?ticket=") {
		t.Errorf("the open route: %d to %q, want %s/redeem", resp.StatusCode, resp.Header.Get("Location"), bOrigin)
	}

	// The administrator opens both: each ticket on its task's host becomes
	// a host-only cookie for that task's path.
	browser := hostsBrowser(t)
	resp, _ := hostDo(t, browser, "GET", link, "", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/proxy/"+a.ID+"/" {
		t.Fatalf("the redemption on %s: %d to %q", aOrigin, resp.StatusCode, resp.Header.Get("Location"))
	}
	set := resp.Header.Values("Set-Cookie")
	if len(set) != 1 || !strings.HasPrefix(set[0], handlers.TaskCookieName+"=") || !strings.Contains(set[0], "Path=/proxy/"+a.ID+"/") ||
		strings.Contains(strings.ToLower(set[0]), "domain") {
		t.Errorf("the task cookie %q, want a host-only one for /proxy/%s/", set, a.ID)
	}
	resp, _ = hostDo(t, browser, "GET", ticketURL(t, m, admin, b.ID), "", nil)
	if resp.StatusCode != 303 {
		t.Fatalf("the redemption on %s: %d", bOrigin, resp.StatusCode)
	}
	var bCookie *http.Cookie
	for _, c := range resp.Cookies() {
		bCookie = c
	}
	for _, task := range []string{a.ID, b.ID} {
		if resp, body := hostDo(t, browser, "GET", m.TaskOrigin(task)+"/proxy/"+task+"/page", "", nil); resp.StatusCode != 200 {
			t.Fatalf("%s on its own host: %d %s", task, resp.StatusCode, body)
		}
	}
	for _, u := range []string{aOrigin + "/proxy/" + b.ID + "/", bOrigin + "/proxy/" + a.ID + "/"} {
		if ours, _ := url.Parse(u); len(browser.Jar.Cookies(ours)) != 0 {
			t.Errorf("the browser would send %v to %s", browser.Jar.Cookies(ours), u)
		}
	}

	// B on A's host, even with B's cookie sent by hand; A and B on the
	// shared origin's host: not found, without reaching the service.
	shared := strings.Replace(m.TasksURL, "{task}.", "", 1)
	for _, u := range []string{aOrigin + "/proxy/" + b.ID + "/page", aOrigin + "/proxy/" + b.ID, shared + "/proxy/" + b.ID + "/page", shared + "/proxy/" + a.ID + "/"} {
		resp, body := hostDo(t, hostsBrowser(t), "GET", u, "", withCookie(bCookie))
		if resp.StatusCode != 404 || strings.Contains(body, "cookie") {
			t.Errorf("%s: %d %s, want 404", u, resp.StatusCode, body)
		}
	}
	// A ticket for B is not redeemed on A's host, and is used up there.
	link = ticketURL(t, m, admin, b.ID)
	resp, body := hostDo(t, hostsBrowser(t), "GET", aOrigin+strings.TrimPrefix(link, bOrigin), "", nil)
	if resp.StatusCode != 404 || len(resp.Cookies()) != 0 {
		t.Errorf("a ticket for %s on %s's host: %d %s %q", b.ID, a.ID, resp.StatusCode, body, resp.Header.Values("Set-Cookie"))
	}
	if resp, _ := hostDo(t, hostsBrowser(t), "GET", link, "", nil); resp.StatusCode != 401 {
		t.Errorf("the same ticket on its own host afterwards: %d, want 401", resp.StatusCode)
	}

	// A page of A cannot open a websocket to B, nor send B a change; B's
	// own page can.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(bOrigin, "http") + "/proxy/" + b.ID + "/api/kernels/k/channels"
	_, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: browser, HTTPHeader: http.Header{"Origin": {aOrigin}}})
	if resp == nil || resp.StatusCode != 403 {
		t.Errorf("a websocket to %s from a page of %s: %v %v", b.ID, a.ID, resp, err)
	}
	_, resp, _ = websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: browser, HTTPHeader: http.Header{"Origin": {bOrigin}}})
	if resp == nil || resp.StatusCode == 403 || resp.StatusCode == 401 {
		t.Errorf("a websocket from %s's own page: %v", b.ID, resp)
	}
	// The hostile service answers GET alone: 501 to a POST that reached it.
	for origin, want := range map[string]int{aOrigin: 403, bOrigin: 501} {
		site := map[bool]string{true: "same-origin", false: "same-site"}[origin == bOrigin]
		resp, body := hostDo(t, browser, "POST", bOrigin+"/proxy/"+b.ID+"/change", "x=1", http.Header{"Origin": {origin}, "Sec-Fetch-Site": {site}})
		if resp.StatusCode != want {
			t.Errorf("a POST to %s from a page of %s: %d %s, want %d", b.ID, origin, resp.StatusCode, body, want)
		}
	}

	// The service still sees no credential of the viewer's.
	_, body = hostDo(t, browser, "GET", aOrigin+"/proxy/"+a.ID+"/whoami", "", nil)
	var seen seenByService
	if err := json.Unmarshal([]byte(body), &seen); err != nil || strings.Contains(seen.Cookie, handlers.TaskCookieName) || seen.Authorization != "" {
		t.Errorf("what the service saw: %s", body)
	}
}
