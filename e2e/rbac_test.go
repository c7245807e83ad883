package e2e

import (
	"context"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAWorkspaceAdminGrantsAndRevokesOnTheMembersTab: under RBAC, a
// WorkspaceAdmin opens their workspace's Members tab, grants Editor to a
// user and Viewer to a group, and revokes the user's; the user sees the
// workspace exactly while they hold the role.
func TestAWorkspaceAdminGrantsAndRevokesOnTheMembersTab(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{RBAC: true})
	ctx := context.Background()
	login, err := client.New(m.URL).Login(ctx, "admin", "")
	must(t, err)
	admin := client.New(m.URL, client.WithToken(login.Token))
	ids := map[string]int64{}
	for _, name := range []string{"lead", "newbie"} {
		u, err := admin.CreateUser(ctx, resolute.UserSpec{Username: name}, "s3cret-pw")
		must(t, err)
		ids[name] = u.ID
	}
	ws, err := admin.CreateWorkspace(ctx, "team-a")
	must(t, err)
	_, err = admin.CreateGroup(ctx, "ml", nil)
	must(t, err)
	must(t, admin.AssignRoles(ctx, resolute.AssignRolesRequest{UserRoleAssignments: []resolute.UserRoleAssignment{{UserID: ids["lead"],
		RoleAssignment: resolute.RoleAssignmentSpec{Role: resolute.RoleRef{Name: "WorkspaceAdmin"}, ScopeWorkspaceID: &ws.ID}}}}))
	newbieLogin, err := client.New(m.URL).Login(ctx, "newbie", "s3cret-pw")
	must(t, err)
	newbie := client.New(m.URL, client.WithToken(newbieLogin.Token))
	sees := func() bool {
		t.Helper()
		list, err := newbie.Workspaces(ctx, client.WorkspaceFilter{})
		must(t, err)
		for _, w := range list {
			if w.ID == ws.ID {
				return true
			}
		}
		return false
	}
	if sees() {
		t.Fatal("newbie sees team-a before any grant")
	}

	page := browser.NewPage(t, 1280)
	page.OnDialog(func(d playwright.Dialog) { d.Accept() })
	signIn(t, page, m.URL, "lead", "s3cret-pw")
	must(t, navLink(page, "Workspaces").Click())
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "team-a"}).First().Click())
	must(t, page.Locator("#tab-members").Click())
	must(t, expect(t, page.Locator("#tab-members")).ToHaveAttribute("aria-current", "page"))
	members := page.Locator("#members")
	must(t, expect(t, members).ToContainText("lead"))
	must(t, expect(t, members).ToContainText("WorkspaceAdmin"))

	form := page.Locator("#add-member")
	must(t, form.GetByLabel("User or group name").Fill("newbie"))
	_, err = form.GetByLabel("Role").SelectOption(playwright.SelectOptionValues{Values: &[]string{"Editor"}})
	must(t, err)
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Grant"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Granted Editor to newbie."))
	newbieRow := members.Locator("tr", playwright.LocatorLocatorOptions{HasText: "newbie"})
	must(t, expect(t, newbieRow).ToContainText("Editor"))
	if !sees() {
		t.Error("newbie does not see team-a after the grant")
	}

	// A group, and a name that is nobody's.
	_, err = form.GetByLabel("Kind").SelectOption(playwright.SelectOptionValues{Values: &[]string{"group"}})
	must(t, err)
	must(t, form.GetByLabel("User or group name").Fill("nobody-group"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Grant"}).Click())
	must(t, expect(t, page.Locator("#e-name")).ToContainText(`There is no group "nobody-group".`))
	must(t, page.Locator("#add-member").GetByLabel("User or group name").Fill("ml"))
	_, err = page.Locator("#add-member").GetByLabel("Role").SelectOption(playwright.SelectOptionValues{Values: &[]string{"Viewer"}})
	must(t, err)
	must(t, page.Locator("#add-member").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Grant"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Granted Viewer to ml."))
	must(t, expect(t, members.Locator("tr", playwright.LocatorLocatorOptions{HasText: "group"})).ToContainText("ml"))

	// Revoke newbie's Editor.
	must(t, newbieRow.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Revoke"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Revoked Editor."))
	must(t, expect(t, newbieRow).ToHaveCount(0))
	if sees() {
		t.Error("newbie still sees team-a after the revoke")
	}
}
