package e2e

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestAnAdministratorAddsTestsAndDeletesAWebhookOnItsPage(t *testing.T) {
	var got atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Determined-AI-Signature") != "" {
			got.Add(1)
		}
	}))
	defer receiver.Close()
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, navLink(page, "Admin").Click())
	must(t, page.Locator("#admin-tabs").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Webhooks"}).Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Webhooks"))
	must(t, expect(t, page.Locator("#no-webhooks")).ToBeVisible())

	form := page.Locator("#new-webhook")
	must(t, form.GetByLabel("Name").Fill("ops"))
	must(t, form.GetByLabel("URL").Fill(receiver.URL))
	if _, err := form.Locator("#type").SelectOption(playwright.SelectOptionValues{Values: &[]string{"SLACK"}}); err != nil {
		t.Fatal(err)
	}
	must(t, form.GetByLabel("COMPLETED", playwright.LocatorGetByLabelOptions{Exact: playwright.Bool(true)}).Check())
	must(t, form.GetByLabel("A trial's log line matches (regex)").Fill("Traceback ("))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create webhook"}).Click())
	// The mistake is named beside the field, and what was typed is kept.
	must(t, expect(t, page.Locator("#e-log_regex")).ToContainText("not a valid regular expression"))
	must(t, expect(t, page.Locator("#f-name")).ToHaveValue("ops"))

	must(t, page.Locator("#f-log_regex").Fill(`Traceback \(most recent call last\)`))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create webhook"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Created webhook ops."))
	row := page.Locator("#webhooks tbody tr")
	must(t, expect(t, row).ToContainText("SLACK"))
	must(t, expect(t, row).ToContainText("experiment COMPLETED"))
	must(t, expect(t, row).ToContainText(`log matches /Traceback \(most recent call last\)/`))

	must(t, row.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Test"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("The receiver accepted the test event."))
	if got.Load() != 1 {
		t.Errorf("the receiver got %d signed requests, want 1", got.Load())
	}
	must(t, page.Locator("#webhooks tbody tr").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Delete"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Deleted the webhook."))
	must(t, expect(t, page.Locator("#no-webhooks")).ToBeVisible())
}
