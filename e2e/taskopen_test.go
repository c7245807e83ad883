package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// openerPage is mallory's page: a button whose click opens, in a new
// window, the master's Open link of alice's task (so that the viewer's
// browser would get a cookie for it on the task origin, where this page
// lives too), then keeps trying to read alice's secret from here.
const openerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Mallory's TensorBoard</title></head>
<body>
<h1>Mallory's TensorBoard</h1>
<button id="bait">Show me the charts</button>
<p id="done">waiting</p>
<pre id="results"></pre>
<script>
document.getElementById("bait").onclick = async () => {
  window.open("{{master}}/tasks/{{victim}}/open");
  let last = "";
  for (let i = 0; i < 40; i++) {
    await new Promise(r => setTimeout(r, 250));
    try {
      const r = await fetch("/proxy/{{victim}}/secret", {credentials: "include"});
      last = r.status + " " + await r.text();
    } catch (e) { last = "refused: " + e; }
    document.getElementById("results").textContent = last;
  }
  document.getElementById("done").textContent = "done";
};
</script>
</body></html>
`

// TestATaskPageCannotOpenTheViewersOtherTasks is the way around the shared
// task origin that a page of one task has: it cannot read a task the viewer
// has not opened, so it makes the viewer's browser open it, through the
// master's Open link, in a window of its own. The master gives such a
// navigation, which another site started, no ticket but a page with the
// link to click, and the page reads nothing of alice's.
func TestATaskPageCannotOpenTheViewersOtherTasks(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := context.Background()
	login, err := client.New(m.URL).Login(ctx, "admin", "")
	must(t, err)
	admin := client.New(m.URL, client.WithToken(login.Token))
	users := newUsers(t, m, admin, "alice", "mallory")
	secret := "alice's secret " + strconv.FormatInt(time.Now().UnixNano(), 36)
	alice := pageTask(t, m, admin, users["alice"], "<!doctype html><title>Alice's TensorBoard</title><h1>Alice's TensorBoard</h1>", secret)
	page := strings.NewReplacer("{{master}}", m.URL, "{{victim}}", alice.ID).Replace(openerPage)
	mallory := pageTask(t, m, admin, users["mallory"], page, "mallory's own")

	browserPage := browser.NewPage(t, 1280)
	signIn(t, browserPage, m.URL, "admin", "")
	must(t, expect(t, browserPage.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = browserPage.Goto(m.URL + "/tasks")
	must(t, err)
	attack, err := browserPage.Context().ExpectPage(func() error { return browserPage.Locator("#open-" + mallory.ID).Click() })
	must(t, err)
	must(t, expect(t, attack.Locator("h1")).ToHaveText("Mallory's TensorBoard"))
	opened, err := attack.Context().ExpectPage(func() error { return attack.Locator("#bait").Click() })
	must(t, err)
	must(t, expect(t, opened.Locator("#error-page")).ToContainText("came from another site"))
	screenshot(t, opened, "task-open-from-another-site")
	if err := playwright.NewPlaywrightAssertions(30000).Locator(attack.Locator("#done")).ToHaveText("done"); err != nil {
		t.Fatalf("mallory's page did not finish: %v", err)
	}
	got, err := attack.Locator("#results").TextContent()
	must(t, err)
	if strings.Contains(got, secret) || strings.HasPrefix(got, "200") {
		t.Fatalf("mallory's page read alice's task: %s", got)
	}
	t.Logf("mallory's page last got: %s", got)

	// The link on that page, clicked on the master's own page, opens
	// alice's task as any Open link does.
	must(t, opened.Locator("#error-next").Click())
	must(t, expect(t, opened.Locator("h1")).ToHaveText("Alice's TensorBoard"))
}
