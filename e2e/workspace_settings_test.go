package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAWorkspacesSettingsAreEditedOnItsPage: the owner (alice) opens her
// workspace's settings, picks a default pool, types storage with a mistake
// that is named beside the box and kept, fixes it and saves; the Unix user
// is shown to her read-only. An administrator then sets the Unix user,
// is told beside the field when it is root's, and saves a real one; the
// storage's secret shows masked and survives the save. Bound to vision, the
// pool says so on the cluster page.
func TestAWorkspacesSettingsAreEditedOnItsPage(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 2, ExtraPools: []string{"team"}})
	login, err := client.New(m.URL).Login(t.Context(), "admin", "")
	must(t, err)
	admin := client.New(m.URL, client.WithToken(login.Token))
	_, err = admin.CreateUser(t.Context(), resolute.UserSpec{Username: "alice"}, "alice-pw")
	must(t, err)
	aliceLogin, err := client.New(m.URL).Login(t.Context(), "alice", "alice-pw")
	must(t, err)
	ws, err := client.New(m.URL, client.WithToken(aliceLogin.Token)).CreateWorkspace(t.Context(), "vision")
	must(t, err)

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "alice", "alice-pw")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, alice"))
	_, err = page.Goto(m.URL + "/workspaces/" + itoa(ws.ID))
	must(t, err)
	must(t, page.Locator("#tab-settings").Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("vision"))
	must(t, expect(t, page.Locator("#available-pools")).ToContainText("default and team"))
	must(t, expect(t, page.Locator("#agent-user-readonly")).ToContainText("Only administrators change this."))
	must(t, expect(t, page.Locator("#f-agent_uid")).ToHaveCount(0))

	_, err = page.Locator("#f-default_compute_pool").SelectOption(playwright.SelectOptionValues{Values: &[]string{"team"}})
	must(t, err)
	bad := "type: s3\nbuckt: vision\n"
	must(t, page.Locator("#f-checkpoint_storage").Fill(bad))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save settings"}).Click())
	must(t, expect(t, page.Locator("#e-checkpoint_storage")).ToContainText("buckt"))
	must(t, expect(t, page.Locator("#f-checkpoint_storage")).ToHaveValue(bad))
	must(t, expect(t, page.Locator("#f-default_compute_pool")).ToHaveValue("team"))

	must(t, page.Locator("#f-checkpoint_storage").Fill("type: s3\nbucket: vision\naccess_key: AKIA\nsecret_key: s3cret\n"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save settings"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Saved the settings of vision."))
	must(t, expect(t, page.Locator("#f-default_compute_pool")).ToHaveValue("team"))
	must(t, expect(t, page.Locator("#f-checkpoint_storage")).ToContainText("secret_key: '********'"))
	must(t, expect(t, page.Locator("#f-checkpoint_storage")).Not().ToContainText("s3cret"))

	// The administrator sets the Unix user on the same page.
	admPage := browser.NewPage(t, 1280)
	signIn(t, admPage, m.URL, "admin", "")
	must(t, expect(t, admPage.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = admPage.Goto(m.URL + "/workspaces/" + itoa(ws.ID) + "/settings")
	must(t, err)
	for field, v := range map[string]string{"#f-agent_uid": "0", "#f-agent_gid": "3000", "#f-agent_user": "root", "#f-agent_group": "vision"} {
		must(t, admPage.Locator(field).Fill(v))
	}
	must(t, admPage.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save settings"}).Click())
	must(t, expect(t, admPage.Locator("#e-agent_uid")).ToContainText("root"))
	must(t, admPage.Locator("#f-agent_uid").Fill("3000"))
	must(t, admPage.Locator("#f-agent_user").Fill("vision"))
	must(t, admPage.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save settings"}).Click())
	must(t, expect(t, admPage.Locator("#flash")).ToContainText("Saved the settings of vision."))
	must(t, expect(t, admPage.Locator("#f-agent_uid")).ToHaveValue("3000"))

	got, err := admin.Workspace(t.Context(), ws.ID)
	must(t, err)
	if got.DefaultComputePool != "team" || got.AgentUserGroup == nil || got.AgentUserGroup.User != "vision" ||
		got.CheckpointStorageConfig["bucket"] != "vision" || got.CheckpointStorageConfig["secret_key"] != resolute.Masked {
		t.Errorf("saved %+v", got.WorkspaceSettingsView)
	}
	raw, err := m.DB.WorkspaceSettings(t.Context(), ws.ID)
	must(t, err)
	if raw.CheckpointStorage["secret_key"] != "s3cret" {
		t.Errorf("the secret after the administrator's save: %v", raw.CheckpointStorage["secret_key"])
	}
	// Bound to vision, the pool says so on the cluster page.
	must(t, admin.BindPool(t.Context(), "team", []string{"vision"}))
	_, err = admPage.Goto(m.URL + "/cluster")
	must(t, err)
	must(t, expect(t, admPage.Locator("#bound-team")).ToHaveText("bound to vision"))
	must(t, expect(t, admPage.Locator("#bound-default")).ToHaveCount(0))

	// Alice now sees the Unix user, read-only.
	_, err = page.Reload()
	must(t, err)
	must(t, expect(t, page.Locator("#agent-user-readonly")).ToContainText("Tasks run as vision (uid 3000)"))
}
