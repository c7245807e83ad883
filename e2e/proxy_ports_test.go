package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/handlers"
)

// portService is the web server a command runs on its HTTP proxy port:
// /whoami says what the request brought it, /ws is a websocket that
// echoes what it gets; anything else is the file.
const portService = `import base64, hashlib, http.server, json, sys

class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/ws") and self.headers.get("Upgrade", "").lower() == "websocket":
            key = self.headers.get("Sec-WebSocket-Key", "") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())
            self.end_headers()
            self.wfile.flush()
            while True:
                data = self.connection.recv(4096)
                if not data:
                    break
                self.connection.sendall(b"echo:" + data)
            self.close_connection = True
            return
        if self.path.startswith("/whoami"):
            body = json.dumps({"path": self.path, "cookie": self.headers.get("Cookie", ""),
                "authorization": self.headers.get("Authorization", ""),
                "prefix": self.headers.get("X-Forwarded-Prefix", "")}).encode()
            self.send_response(200)
            self.send_header("Set-Cookie", "resolute_task=stolen; Path=/")
            self.send_header("Set-Cookie", "app=kept; Path=/")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
`

// TestHTTPProxyPortsAreServedOnTheTaskOriginToTheirOwnerOnly: a command's
// proxy_ports entry without proxy_tcp (Determined's HTTP port) is served
// on the task origin at /proxy/ID:PORT/ to its owner, who opens it with a
// ticket; the service gets neither the master's cookie nor its bearer
// token nor the task cookie, and cannot set the task cookie; a websocket
// from the task origin goes through and one from elsewhere does not; the
// task's page and det task open-port link it for its owner; another user
// gets no ticket and nothing without one; a port the command does not list
// gets no ticket, and the port's cookie opens no other port; a trial's
// HTTP port is its experiment owner's, as trial-N.
func TestHTTPProxyPortsAreServedOnTheTaskOriginToTheirOwnerOnly(t *testing.T) {
	data := filepath.Join(mastertest.TempDir(t), "data")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", data, "--resource-manager-slots", "4")
	m.Start()
	admin := m.Login("admin")
	ann := newUser(t, m, admin, "ann", nil)
	bo := newUser(t, m, admin, "bo", nil)

	port := freeLocalPort(t)
	marker := "served-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := startTask(t, m, ann.token, "commands", resolute.CreateTaskRequest{
		Config:     fmt.Sprintf("resources: {slots: 0}\nenvironment: {proxy_ports: [{proxy_port: %d}]}\n", port),
		Entrypoint: []string{"python3", "serve.py", strconv.Itoa(port)},
		ContextTgz: packFiles(t, map[string]string{"marker.txt": marker, "serve.py": portService})})
	waitTask(t, m, ann.token, "commands", cmd.ID, func(k resolute.Task) bool { return k.State == resolute.TaskRunning })

	key := cmd.ID + ":" + strconv.Itoa(port)
	var open resolute.OpenTaskResponse
	if code := m.Call("POST", "/api/v1/tasks/"+cmd.ID+"/open", ann.token, resolute.OpenTaskRequest{Port: port}, &open); code != 200 {
		t.Fatalf("ann opens her port: %d", code)
	}
	if !strings.HasPrefix(open.URL, m.TasksURL+"/redeem?ticket=") {
		t.Fatalf("the link %q is not on the task origin %s", open.URL, m.TasksURL)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(open.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/proxy/"+key+"/" {
		t.Fatalf("the ticket led to %s, want /proxy/%s/", resp.Request.URL, key)
	}
	// The server may still be starting after the task runs.
	deadline := time.Now().Add(time.Minute)
	for body := ""; !strings.Contains(body, marker); {
		if time.Now().After(deadline) {
			t.Fatalf("ann's port never served the marker: %q\n%s", body, taskLog(t, m, ann.token, cmd.ID))
		}
		body = m.TaskGet(browser, "/proxy/"+key+"/marker.txt")
		if !strings.Contains(body, marker) {
			time.Sleep(200 * time.Millisecond)
		}
	}

	// A browser sends the master's cookie to the task origin too (cookies
	// know no ports); a script may send the master's bearer token.
	req, _ := http.NewRequest("GET", m.TasksURL+"/proxy/"+key+"/whoami", nil)
	req.AddCookie(&http.Cookie{Name: handlers.CookieName, Value: ann.token})
	req.Header.Set("Authorization", "Bearer "+ann.token)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var seen struct{ Path, Cookie, Authorization, Prefix string }
	if err := json.Unmarshal(b, &seen); err != nil || resp.StatusCode != 200 {
		t.Fatalf("whoami: %d %s", resp.StatusCode, b)
	}
	if strings.Contains(seen.Cookie, ann.token) || strings.Contains(seen.Authorization, ann.token) ||
		strings.Contains(seen.Cookie, handlers.TaskCookieName) || seen.Authorization != "" {
		t.Errorf("the task's server saw cookie %q, authorization %q", seen.Cookie, seen.Authorization)
	}
	if seen.Path != "/whoami" || seen.Prefix != "/proxy/"+key {
		t.Errorf("the server was asked %q with prefix %q, want /whoami under /proxy/%s", seen.Path, seen.Prefix, key)
	}
	for _, c := range resp.Cookies() {
		if c.Name == handlers.TaskCookieName {
			t.Errorf("the task set the task cookie: %v", c)
		}
	}

	// A page of another site may not open a websocket to the port.
	req, _ = http.NewRequest("GET", m.TasksURL+"/proxy/"+key+"/ws", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Origin", "http://evil.example")
	if resp, err = browser.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin websocket to ann's port: %d, want 403", resp.StatusCode)
	}

	// The task's page links the port for ann, who follows the link as a
	// browser does (signed in to the master with its cookie); bo's page
	// has no link.
	link := "/tasks/" + cmd.ID + "/open?port=" + strconv.Itoa(port)
	pageJar, _ := cookiejar.New(nil)
	pageJar.SetCookies(mustURL(t, m.URL), []*http.Cookie{{Name: handlers.CookieName, Value: ann.token, Path: "/"}})
	annsBrowser := &http.Client{Jar: pageJar}
	if page := getBody(t, annsBrowser, m.URL+"/tasks/"+cmd.ID); !strings.Contains(page, `href="`+link+`"`) {
		t.Errorf("ann's task page does not link %s", link)
	}
	if body := getBody(t, annsBrowser, m.URL+link); !strings.Contains(body, "marker.txt") {
		t.Errorf("ann's link to her port led to %q, want the port's listing", body)
	}
	if body := getBody(t, annsBrowser, m.TasksURL+"/proxy/"+key+"/marker.txt"); body != marker {
		t.Errorf("after the link, ann's port gave %q", body)
	}
	bosJar, _ := cookiejar.New(nil)
	bosJar.SetCookies(mustURL(t, m.URL), []*http.Cookie{{Name: handlers.CookieName, Value: bo.token, Path: "/"}})
	if page := getBody(t, &http.Client{Jar: bosJar}, m.URL+"/tasks/"+cmd.ID); strings.Contains(page, "open?port=") {
		t.Errorf("bo's view of ann's task links her port")
	}

	// det task open-port prints a link of its own, which opens the port in
	// a fresh browser; bo's is refused.
	det := buildDet(t)
	out, errOut, err := detAs{det, m.URL, ann.token, t.TempDir()}.run(t, "task", "open-port", cmd.ID, strconv.Itoa(port), "--no-browser")
	if err != nil || !strings.HasPrefix(out, m.TasksURL+"/redeem?ticket=") {
		t.Fatalf("det task open-port: %v %q %q", err, out, errOut)
	}
	fresh, _ := cookiejar.New(nil)
	if body := getBody(t, &http.Client{Jar: fresh}, strings.TrimSpace(out)); !strings.Contains(body, "marker.txt") {
		t.Errorf("det task open-port's link led to %q", body)
	}
	if _, errOut, err := (detAs{det, m.URL, bo.token, t.TempDir()}).run(t, "task", "open-port", cmd.ID, strconv.Itoa(port)); err == nil || !strings.Contains(errOut, "belongs to ann") {
		t.Errorf("bo's det task open-port: %v %q", err, errOut)
	}

	// A websocket from the task origin's own page goes through, both ways.
	conn, err := net.Dial("tcp", strings.TrimPrefix(m.TasksURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "GET /proxy/%s/ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\nCookie: %s=%s\r\n\r\n",
		key, strings.TrimPrefix(m.TasksURL, "http://"), m.TasksURL, handlers.TaskCookieName, taskCookieOf(t, jar, m.TasksURL+"/proxy/"+key+"/"))
	br := bufio.NewReader(conn)
	wsResp, err := http.ReadResponse(br, nil)
	if err != nil || wsResp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("ann's websocket to her port: %v %v", err, wsResp)
	}
	if _, err := conn.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	echo := make([]byte, len("echo:hello"))
	if _, err := io.ReadFull(br, echo); err != nil || string(echo) != "echo:hello" {
		t.Errorf("the websocket echoed %q, %v", echo, err)
	}

	// Bo gets no ticket, and nothing without one.
	var refusal resolute.ErrorResponse
	if code := m.Call("POST", "/api/v1/tasks/"+cmd.ID+"/open", bo.token, resolute.OpenTaskRequest{Port: port}, &refusal); code != http.StatusForbidden {
		t.Errorf("bo asks for a ticket to ann's port: %d %q, want 403", code, refusal.Error.Message)
	}
	if code := m.Call("POST", "/api/v1/tasks/"+cmd.ID+"/open", admin, resolute.OpenTaskRequest{Port: port}, &refusal); code != http.StatusForbidden {
		t.Errorf("the administrator asks for a ticket to ann's port: %d %q, want 403", code, refusal.Error.Message)
	}
	stranger := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ = http.NewRequest("GET", m.TasksURL+"/proxy/"+key+"/marker.txt", nil)
	req.AddCookie(&http.Cookie{Name: handlers.CookieName, Value: bo.token})
	req.Header.Set("Authorization", "Bearer "+bo.token)
	if resp, err = stranger.Do(req); err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 || strings.Contains(string(b), marker) {
		t.Errorf("bo, with the master's credentials and no ticket, got %d %q", resp.StatusCode, b)
	}

	// A browser without the port's cookie is sent to the master to open it.
	req, _ = http.NewRequest("GET", m.TasksURL+"/proxy/"+key+"/marker.txt", nil)
	req.Header.Set("Accept", "text/html")
	if resp, err = stranger.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := m.URL + link + "&path=marker.txt"; resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Errorf("a browser without the cookie: %d to %q, want 303 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	// A port the command does not list gets no ticket, and the port's
	// cookie, sent there by hand, opens nothing.
	if code := m.Call("POST", "/api/v1/tasks/"+cmd.ID+"/open", ann.token, resolute.OpenTaskRequest{Port: 22}, &refusal); code != http.StatusForbidden ||
		!strings.Contains(refusal.Error.Message, "not one of its HTTP proxy ports") {
		t.Errorf("ann asks for a port her command does not list: %d %q", code, refusal.Error.Message)
	}
	taskCookie := taskCookieOf(t, jar, m.TasksURL+"/proxy/"+key+"/")
	for _, path := range []string{"/proxy/" + cmd.ID + ":22/", "/proxy/" + cmd.ID + "/"} {
		req, _ = http.NewRequest("GET", m.TasksURL+path, nil)
		req.AddCookie(&http.Cookie{Name: handlers.TaskCookieName, Value: taskCookie})
		if resp, err = stranger.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("the port's cookie opened %s", path)
		}
	}

	// A trial's HTTP port, of its experiment's proxy_ports, as trial-N:
	// ann's, and not bo's.
	trialPort := freeLocalPort(t)
	dir := t.TempDir()
	trialMarker := "trial-" + marker
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte(trialMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := m.CreateExperiment(ann.token, fmt.Sprintf("name: serves\nentrypoint: python3 -m http.server %d --bind 127.0.0.1\n"+
		"searcher: {name: single, metric: loss, max_length: {batches: 1}}\nresources: {slots_per_trial: 0}\n"+
		"environment: {proxy_ports: [{proxy_port: %d}]}\n", trialPort, trialPort), dir)
	var trialID int64
	for deadline := time.Now().Add(2 * time.Minute); trialID == 0; time.Sleep(200 * time.Millisecond) {
		if trials := m.Trials(ann.token, exp); len(trials) > 0 && trials[0].State == resolute.StateActive {
			trialID = trials[0].ID
		} else if time.Now().After(deadline) {
			t.Fatalf("the experiment's trial does not run: %+v", trials)
		}
	}
	trialTask := resolute.TrialTaskID(trialID)
	if code := m.Call("POST", "/api/v1/tasks/"+trialTask+"/open", bo.token, resolute.OpenTaskRequest{Port: trialPort}, &refusal); code != http.StatusForbidden {
		t.Errorf("bo asks for a ticket to ann's trial's port: %d %q, want 403", code, refusal.Error.Message)
	}
	trialKey := trialTask + ":" + strconv.Itoa(trialPort)
	deadline = time.Now().Add(time.Minute)
	for body := ""; body != trialMarker; {
		if time.Now().After(deadline) {
			t.Fatalf("ann's trial's port never served the marker: %q", body)
		}
		if code := m.Call("POST", "/api/v1/tasks/"+trialTask+"/open", ann.token, resolute.OpenTaskRequest{Port: trialPort}, &open); code != 200 {
			t.Fatalf("ann opens her trial's port: %d", code)
		}
		trialJar, _ := cookiejar.New(nil)
		trialBrowser := &http.Client{Jar: trialJar}
		getBody(t, trialBrowser, open.URL)
		if body = getBody(t, trialBrowser, m.TasksURL+"/proxy/"+trialKey+"/marker.txt"); body != trialMarker {
			time.Sleep(200 * time.Millisecond)
		}
	}
	trialLink := "/tasks/" + trialTask + "/open?port=" + strconv.Itoa(trialPort)
	if page := getBody(t, annsBrowser, m.URL+"/trials/"+strconv.FormatInt(trialID, 10)); !strings.Contains(page, `href="`+trialLink+`"`) {
		t.Errorf("ann's trial page does not link %s", trialLink)
	}
	if body := getBody(t, annsBrowser, m.URL+trialLink); !strings.Contains(body, "marker.txt") {
		t.Errorf("ann's link to her trial's port led to %q", body)
	}
	m.Call("POST", fmt.Sprintf("/api/v1/experiments/%d/kill", exp), ann.token, nil, nil)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// getBody returns the body of a GET with c.
func getBody(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// taskCookieOf is the task cookie that jar holds for u.
func taskCookieOf(t *testing.T, jar http.CookieJar, u string) string {
	t.Helper()
	for _, c := range jar.Cookies(mustURL(t, u)) {
		if c.Name == handlers.TaskCookieName {
			return c.Value
		}
	}
	t.Fatalf("no task cookie for %s", u)
	return ""
}
