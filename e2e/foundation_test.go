package e2e

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

var browser *Browser

func TestMain(m *testing.M) {
	os.Exit(dbtest.Main(&mainRunner{m}))
}

// mainRunner starts the browser once for every test of the package.
type mainRunner struct{ m *testing.M }

func (r *mainRunner) Run() int {
	var err error
	browser, err = StartBrowser()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer browser.Stop()
	return r.m.Run()
}

func expect(t *testing.T, l playwright.Locator) playwright.LocatorAssertions {
	t.Helper()
	return playwright.NewPlaywrightAssertions(10000).Locator(l)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func signIn(t *testing.T, page playwright.Page, base, user, password string) {
	t.Helper()
	_, err := page.Goto(base + "/login")
	must(t, err)
	must(t, page.GetByLabel("Username").Fill(user))
	must(t, page.GetByLabel("Password").Fill(password))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
}

func TestAdminSignsInCreatesAProjectAndSignsOut(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)

	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	must(t, expect(t, page.Locator("#no-password-banner")).ToBeVisible())

	must(t, navLink(page, "Workspaces").Click())
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Uncategorized"}).Click())
	form := page.Locator("#new-project")
	must(t, form.GetByLabel("Name").Fill("image-classification"))
	must(t, form.GetByLabel("Description").Fill("ResNets on CIFAR"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create project"}).Click())

	must(t, expect(t, page.Locator("#flash")).ToContainText("Created project image-classification."))
	must(t, expect(t, page.Locator("#projects")).ToContainText("image-classification"))
	must(t, expect(t, page.Locator("#projects")).ToContainText("ResNets on CIFAR"))

	// The dashboard lists it too, after a reload.
	_, err := page.Goto(m.URL + "/dashboard")
	must(t, err)
	must(t, expect(t, page.Locator("#projects")).ToContainText("image-classification"))

	must(t, page.Locator("#user-menu summary").Click())
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign out"}).Click())
	must(t, expect(t, page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "Sign in"})).ToBeVisible())

	// The session is gone: the dashboard sends us back to the login page.
	_, err = page.Goto(m.URL + "/dashboard")
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/login\?redirect=%2Fdashboard$`)))
}

func TestAnUnauthenticatedVisitRedirectsToLoginAndBack(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{InitialPassword: "correct horse"})
	page := browser.NewPage(t, 1280)

	_, err := page.Goto(m.URL + "/workspaces")
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/login\?redirect=%2Fworkspaces$`)))

	must(t, page.GetByLabel("Username").Fill("admin"))
	must(t, page.GetByLabel("Password").Fill("wrong"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
	must(t, expect(t, page.Locator("#login-error")).ToHaveText("invalid username or password"))

	must(t, page.GetByLabel("Password").Fill("correct horse"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Workspaces"))
	must(t, expect(t, page.Locator("#no-password-banner")).ToHaveCount(0))
}

func TestThePhoneLayoutShowsNavigationAndTables(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 390)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, name := range []string{"Dashboard", "Experiments", "Job Queue", "Model Registry", "Tasks", "Cluster", "Workspaces", "Admin"} {
		must(t, expect(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})).ToBeVisible())
	}
	// Nothing is wider than the screen.
	width, err := page.Evaluate("document.documentElement.scrollWidth")
	must(t, err)
	if w, ok := width.(int); ok && w > 390 {
		t.Fatalf("page is %dpx wide on a 390px screen", w)
	}
	// Every section is built: Tasks is a real page.
	must(t, navLink(page, "Tasks").Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Tasks"))
	must(t, expect(t, page.Locator("#task-table")).ToBeVisible())
}
