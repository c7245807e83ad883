package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestACPUOnlyNotebookFromTheTasksPage(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	// The Kill button asks first.
	page.OnDialog(func(d playwright.Dialog) { d.Accept() })
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	must(t, navLink(page, "Tasks").Click())
	must(t, expect(t, page.Locator("#no-tasks")).ToContainText("No live tasks."))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Launch CPU-only Notebook"}).Click())

	// Its page: launched, and followed until Jupyter serves.
	must(t, expect(t, page.Locator("#flash")).ToContainText("Launched notebook-"))
	id := regexp.MustCompile(`notebook-\d+`).FindString(page.URL())
	if id == "" || !strings.HasSuffix(page.URL(), "/tasks/"+id) {
		t.Fatalf("after launch the page is %s", page.URL())
	}
	must(t, expect(t, page.Locator("#task-config")).ToContainText("slots: 0"))
	must(t, expect(t, page.Locator("#task-ready")).ToHaveText("yes", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect(t, page.Locator("#open-task")).ToHaveAttribute("href", "/tasks/"+id+"/open"))
	must(t, expect(t, page.Locator("#task-log-lines")).ToContainText("is running at", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(15000)}))
	screenshot(t, page, "task-notebook")

	// The table lists it, with the owner and an Open button.
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "← Tasks"}).Click())
	row := page.Locator("#task-" + id)
	must(t, expect(t, row).ToContainText("admin"))
	must(t, expect(t, row).ToContainText("RUNNING"))
	must(t, expect(t, page.Locator("#open-"+id)).ToBeVisible())
	screenshot(t, page, "tasks")
	// Open leads, in a new tab, to Jupyter on the task origin.
	jupyter, err := page.Context().ExpectPage(func() error { return page.Locator("#open-" + id).Click() })
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(30000).Page(jupyter).ToHaveURL(regexp.MustCompile(
		`^`+regexp.QuoteMeta(m.TasksURL)+`/proxy/`+id+`/tree`)))
	must(t, expect(t, jupyter.Locator("#notebook_list")).ToBeAttached())
	screenshot(t, jupyter, "task-notebook-open")
	must(t, jupyter.Close())

	// Its logs link leads back to its page, where it is killed.
	must(t, page.Locator("#logs-"+id).Click())
	must(t, expect(t, page.Locator("#task-live h1")).ToContainText("Notebook"))
	must(t, page.Locator("#kill-task").Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Killing "+id+"."))
	must(t, expect(t, page.Locator("#state-"+id)).ToHaveText("TERMINATED", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(20000)}))
	must(t, expect(t, page.Locator("#kill-task")).ToHaveCount(0))
	must(t, expect(t, page.Locator("#open-task")).ToHaveCount(0))

	// The live table drops it; "Show ended" brings it back, ended.
	_, err = page.Goto(m.URL + "/tasks")
	must(t, err)
	must(t, expect(t, page.Locator("#task-"+id)).ToHaveCount(0))
	must(t, page.GetByLabel("Show ended").Check())
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Filter"}).Click())
	must(t, expect(t, page.Locator("#task-"+id)).ToContainText("TERMINATED"))
	must(t, expect(t, page.Locator("#task-"+id)).ToContainText("killed"))
}

func TestACommandFromTheTasksPageShowsItsOutput(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/tasks")
	must(t, err)
	must(t, page.GetByLabel("Run a command").Fill("echo hello from $DET_TASK_TYPE"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Run", Exact: playwright.Bool(true)}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Launched command-"))
	must(t, expect(t, page.Locator("#task-log-lines")).ToContainText("hello from COMMAND"))
	must(t, expect(t, page.Locator("#task-exit")).ToHaveText("0"))
}
