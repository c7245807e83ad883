package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestATemplateIsCreatedAndItsErrorsShowBesideTheEditor(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	must(t, navLink(page, "Templates").Click())
	form := page.Locator("#new-template")
	must(t, form.GetByLabel("Name").Fill("shared-storage"))
	must(t, form.GetByLabel("Configuration (YAML)").Fill("checkpoint_storage:\n  type: shared_fs\n  hostpath: /mnt/ckpt\n"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create template"}).Click())

	// The mistake is named next to the editor, and what was typed is kept.
	must(t, expect(t, page.Locator("#e-yaml")).ToContainText("checkpoint_storage.hostpath: unknown key (did you mean host_path?) (line 3)"))
	must(t, expect(t, page.Locator("#f-yaml")).ToHaveValue("checkpoint_storage:\n  type: shared_fs\n  hostpath: /mnt/ckpt\n"))

	must(t, page.Locator("#f-yaml").Fill("checkpoint_storage:\n  type: shared_fs\n  host_path: /mnt/ckpt\n"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create template"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Created template shared-storage."))
	must(t, expect(t, page.Locator("h1")).ToHaveText("Template shared-storage"))

	must(t, navLink(page, "Templates").Click())
	must(t, expect(t, page.Locator("#templates")).ToContainText("shared-storage"))
}
