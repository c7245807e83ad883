package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// pageService is a user's own `tensorboard` program: it serves page.html
// of its directory, the secret file at .../secret, and counts the POSTs it
// gets, told at .../posts.
const pageService = `#!/usr/bin/python3
import argparse, http.server, os

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--path_prefix", default="")
a, _ = p.parse_known_args()
HERE = os.path.dirname(os.path.abspath(__file__))
posts = 0

class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, body, ctype):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.endswith("/secret"):
            self.answer(open(os.path.join(HERE, "secret"), "rb").read(), "text/plain")
        elif self.path.endswith("/posts"):
            self.answer(str(posts).encode(), "text/plain")
        else:
            self.answer(open(os.path.join(HERE, "page.html"), "rb").read(), "text/html; charset=utf-8")

    def do_POST(self):
        global posts
        posts += 1
        self.answer(b"written", "text/plain")

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer((a.host, a.port), Handler)
print("TensorBoard 2.x at http://%s:%d%s/ (Press CTRL+C to quit)" % (a.host, a.port, a.path_prefix), flush=True)
srv.serve_forever()
`

// theftPage is mallory's page: it tries to read alice's task, which the
// administrator viewing the page has opened as well, and to write to it.
const theftPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Mallory's TensorBoard</title></head>
<body>
<h1>Mallory's TensorBoard</h1>
<p id="done">running</p>
<pre id="results"></pre>
<script>
const VICTIM = "{{victim}}", THERE = "{{victimOrigin}}/proxy/{{victim}}/";
const R = {};
async function attempt(name, fn) {
  try { R[name] = String(await fn()); } catch (e) { R[name] = "refused: " + e; }
  document.getElementById("results").textContent = JSON.stringify(R, null, 1);
}
(async () => {
  await attempt("fetch on this host", async () => {
    const r = await fetch("/proxy/" + VICTIM + "/secret", {credentials: "include"});
    return r.status + " " + await r.text();
  });
  await attempt("fetch on the victim's host", async () => {
    const r = await fetch(THERE + "secret", {credentials: "include"});
    return r.status + " " + await r.text();
  });
  await attempt("a frame of the victim's page", () => new Promise(res => {
    const f = document.createElement("iframe");
    f.onload = () => { try { res(f.contentDocument.body.textContent); } catch (e) { res("refused: " + e); } };
    f.src = THERE + "secret"; document.body.append(f);
    setTimeout(() => res("no answer"), 10000);
  }));
  await attempt("POST on the victim's host", async () => {
    const r = await fetch(THERE + "write", {method: "POST", mode: "no-cors", credentials: "include", body: "x"});
    return r.type + " " + r.status;
  });
  document.getElementById("done").textContent = "done";
})();
</script>
</body></html>
`

// TestATaskPageCannotReadAnotherTaskOnItsOwnHost: alice and mallory each
// run a TensorBoard of their own program; an administrator opens alice's,
// then mallory's, whose page tries to read alice's secret (by fetch, on
// its own host and on alice's, and in a frame) and to POST to her task
// with the administrator's cookie for it. With one task origin for all
// (the default) it can: paths do not separate origins. With
// http://{task}.localhost:PORT, every task on a host of its own, it gets
// nothing of alice's and writes nothing.
func TestATaskPageCannotReadAnotherTaskOnItsOwnHost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		taskHosts bool
	}{
		{"one task origin for all", false},
		{"a host per task", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := handlerstest.Start(t, handlerstest.Options{TaskHosts: tc.taskHosts})
			ctx := context.Background()
			login, err := client.New(m.URL).Login(ctx, "admin", "")
			must(t, err)
			admin := client.New(m.URL, client.WithToken(login.Token))
			users := newUsers(t, m, admin, "alice", "mallory")
			secret := "alice's secret " + strconv.FormatInt(time.Now().UnixNano(), 36)
			alice := pageTask(t, m, admin, users["alice"], "<!doctype html><title>Alice's TensorBoard</title><h1>Alice's TensorBoard</h1>", secret)
			page := strings.NewReplacer("{{victim}}", alice.ID, "{{victimOrigin}}", m.TaskOrigin(alice.ID)).Replace(theftPage)
			mallory := pageTask(t, m, admin, users["mallory"], page, "mallory's own")

			// The administrator opens alice's task, whose own page reads her
			// secret: the control.
			browserPage := browser.NewPage(t, 1280)
			browserPage.Context().OnConsole(func(m playwright.ConsoleMessage) { t.Logf("console: %s", m.Text()) })
			signIn(t, browserPage, m.URL, "admin", "")
			must(t, expect(t, browserPage.Locator("h1")).ToHaveText("Welcome, admin"))
			_, err = browserPage.Goto(m.URL + "/tasks/" + alice.ID + "/open")
			must(t, err)
			must(t, expect(t, browserPage.Locator("h1")).ToHaveText("Alice's TensorBoard"))
			if got := browserPage.URL(); got != m.TaskOrigin(alice.ID)+"/proxy/"+alice.ID+"/" {
				t.Fatalf("alice's task opened at %s", got)
			}
			read, err := browserPage.Evaluate(`async () => (await fetch("secret")).text()`)
			must(t, err)
			if read != secret {
				t.Fatalf("the control: alice's own page reads %q, so the attack below would prove nothing", read)
			}

			// Then mallory's.
			_, err = browserPage.Goto(m.URL + "/tasks/" + mallory.ID + "/open")
			must(t, err)
			if err := playwright.NewPlaywrightAssertions(60000).Locator(browserPage.Locator("#done")).ToHaveText("done"); err != nil {
				partial, _ := browserPage.Locator("#results").TextContent()
				t.Fatalf("mallory's page did not finish: %v\nso far: %s", err, partial)
			}
			if got := browserPage.URL(); got != m.TaskOrigin(mallory.ID)+"/proxy/"+mallory.ID+"/" {
				t.Fatalf("mallory's task opened at %s", got)
			}
			screenshot(t, browserPage, "task-hosts-"+strings.ReplaceAll(tc.name, " ", "-"))
			text, err := browserPage.Locator("#results").TextContent()
			must(t, err)
			t.Logf("what mallory's page got:\n%s", text)
			var results map[string]string
			must(t, json.Unmarshal([]byte(text), &results))
			readSecret := false
			for _, got := range results {
				readSecret = readSecret || strings.Contains(got, secret)
			}

			// What reached alice's service, asked on her own host with the
			// administrator's cookie for it.
			_, err = browserPage.Goto(m.TaskOrigin(alice.ID) + "/proxy/" + alice.ID + "/posts")
			must(t, err)
			posts, err := browserPage.Locator("body").TextContent()
			must(t, err)

			if !tc.taskHosts {
				// The shared origin: mallory's page reads and writes alice's
				// task as the administrator.
				if !strings.HasPrefix(results["fetch on this host"], "200 "+secret) || !readSecret || strings.TrimSpace(posts) != "1" {
					t.Errorf("on one task origin for all, mallory's page was expected to read alice's task and write to it: %v, %s posts", results, posts)
				}
				return
			}
			if readSecret {
				t.Errorf("mallory's page read alice's secret: %v", results)
			}
			if got := results["fetch on this host"]; !strings.HasPrefix(got, "404 ") {
				t.Errorf("alice's task on mallory's host: %s, want 404", got)
			}
			for _, name := range []string{"fetch on the victim's host", "a frame of the victim's page"} {
				if !strings.HasPrefix(results[name], "refused: ") {
					t.Errorf("%s: %s, want refused", name, results[name])
				}
			}
			if strings.TrimSpace(posts) != "0" {
				t.Errorf("mallory's page posted to alice's task: %s POSTs reached it", posts)
			}
		})
	}
}

// newUsers makes ordinary users of names (each with the password
// name+"-pw") and returns their signed-in clients.
func newUsers(t *testing.T, m *handlerstest.Master, admin *client.Client, names ...string) map[string]*client.Client {
	t.Helper()
	ctx := context.Background()
	users := map[string]*client.Client{}
	for _, name := range names {
		_, err := admin.CreateUser(ctx, resolute.UserSpec{Username: name}, name+"-pw")
		must(t, err)
		l, err := client.New(m.URL).Login(ctx, name, name+"-pw")
		must(t, err)
		users[name] = client.New(m.URL, client.WithToken(l.Token))
	}
	return users
}

// pageTask launches user's TensorBoard of pageService, serving page and
// secret, and waits until it serves.
func pageTask(t *testing.T, m *handlerstest.Master, admin, user *client.Client, page, secret string) resolute.Task {
	t.Helper()
	ctx := context.Background()
	paused := false
	exp, err := user.CreateExperiment(ctx, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: "name: bait\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n"},
		Activate:                &paused}, nil, 0, nil)
	must(t, err)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	for name, text := range map[string]string{"tensorboard": pageService, "page.html": page, "secret": secret} {
		must(t, os.WriteFile(filepath.Join(dir, "bin", name), []byte(text), 0o755))
	}
	task, err := user.CreateTask(ctx, resolute.TaskTensorBoard, resolute.CreateTaskRequest{
		ExperimentIDs: []int64{exp.Experiment.ID}, ContextTgz: mastertest.PackDir(t, dir),
		Config: "environment: {environment_variables: [\"PATH=bin:/usr/bin:/bin\"]}\n"})
	must(t, err)
	for deadline := time.Now().Add(60 * time.Second); !task.Ready; time.Sleep(200 * time.Millisecond) {
		task, err = admin.Task(ctx, resolute.TaskTensorBoard, task.ID)
		must(t, err)
		if task.State == resolute.TaskTerminated || time.Now().After(deadline) {
			t.Fatalf("the TensorBoard %+v", task)
		}
	}
	return task
}
