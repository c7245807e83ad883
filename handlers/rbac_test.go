package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// rbacCluster is a master under RBAC with two workspaces, a and b, a
// project in each, and users who hold roles in a only.
type rbacCluster struct {
	m                 *handlerstest.Master
	admin             string // token
	wsA, wsB          int64
	projA, projB      int64
	ids               map[string]int64 // user ids by name
	tokens            map[string]string
	group             int64
	viewer, editor    string
	wsAdmin, teammate string
	outsider, grouped string
	n                 int
}

func (c *rbacCluster) next() int { c.n++; return c.n }

// newRBACCluster sets it up through the API, as an administrator would.
func newRBACCluster(t *testing.T, rbac bool) *rbacCluster {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{RBAC: rbac})
	c := &rbacCluster{m: m, admin: login(t, m, "admin", ""), ids: map[string]int64{}, tokens: map[string]string{}}
	must := func(code int, what string) {
		t.Helper()
		if code != 200 {
			t.Fatalf("%s: status %d", what, code)
		}
	}
	for _, name := range []string{"viewer", "editor", "wsadmin", "grouped", "outsider"} {
		var u resolute.UserResponse
		must(api(t, m, "POST", "/api/v1/users", c.admin, `{"user":{"username":"`+name+`"},"password":"s3cret-pw"}`, &u), "create "+name)
		c.ids[name] = u.User.ID
		c.tokens[name] = login(t, m, name, "s3cret-pw")
	}
	for i, name := range []string{"team-a", "team-b"} {
		var ws resolute.WorkspaceResponse
		must(api(t, m, "POST", "/api/v1/workspaces", c.admin, `{"name":"`+name+`"}`, &ws), "workspace")
		var p resolute.ProjectResponse
		must(api(t, m, "POST", fmt.Sprintf("/api/v1/workspaces/%d/projects", ws.Workspace.ID), c.admin, `{"name":"p"}`, &p), "project")
		if i == 0 {
			c.wsA, c.projA = ws.Workspace.ID, p.Project.ID
		} else {
			c.wsB, c.projB = ws.Workspace.ID, p.Project.ID
		}
	}
	var g resolute.GroupResponse
	must(api(t, m, "POST", "/api/v1/groups", c.admin, fmt.Sprintf(`{"name":"ml","addUsers":[%d]}`, c.ids["grouped"]), &g), "group")
	c.group = g.Group.GroupID
	assign := fmt.Sprintf(`{"userRoleAssignments":[
		{"userId":%d,"roleAssignment":{"role":{"roleId":4},"scopeWorkspaceId":%d}},
		{"userId":%d,"roleAssignment":{"role":{"name":"Editor"},"scopeWorkspaceId":%d}},
		{"userId":%d,"roleAssignment":{"role":{"name":"WorkspaceAdmin"},"scopeWorkspaceId":%d}}],
		"groupRoleAssignments":[{"groupId":%d,"roleAssignment":{"role":{"name":"Editor"},"scopeWorkspaceId":%d}}]}`,
		c.ids["viewer"], c.wsA, c.ids["editor"], c.wsA, c.ids["wsadmin"], c.wsA, c.group, c.wsA)
	must(api(t, m, "POST", "/api/v1/roles/add-assignments", c.admin, assign, nil), "assign roles")
	return c
}

func (c *rbacCluster) command(project int64) string {
	return fmt.Sprintf(`{"config":"resources: {slots: 0}\n","entrypoint":["sleep","60"],"projectId":%d}`, project)
}

func (c *rbacCluster) newProject(t *testing.T, who string, ws int64) int {
	t.Helper()
	return api(t, c.m, "POST", fmt.Sprintf("/api/v1/workspaces/%d/projects", ws), c.tokens[who],
		fmt.Sprintf(`{"name":"by-%s-%d"}`, who, c.next()), nil)
}

func TestUnderRBACRolesInAWorkspaceDecideWhatItsMembersMayDo(t *testing.T) {
	c := newRBACCluster(t, true)
	m := c.m

	// A Viewer reads the workspace but launches nothing in it.
	if code := api(t, m, "GET", fmt.Sprintf("/api/v1/workspaces/%d", c.wsA), c.tokens["viewer"], "", nil); code != 200 {
		t.Errorf("viewer reads workspace a: %d", code)
	}
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/commands", c.tokens["viewer"], c.command(c.projA), &e); code != 403 ||
		!strings.Contains(e.Error.Message, "PERMISSION_TYPE_CREATE_NSC") {
		t.Errorf("viewer launches a command: %d %+v", code, e)
	}
	if code := c.newProject(t, "viewer", c.wsA); code != 403 {
		t.Errorf("viewer creates a project: %d", code)
	}

	// An Editor launches and creates in theirs, and cannot change another
	// workspace, which they do not even see.
	var task resolute.TaskResponse
	if code := api(t, m, "POST", "/api/v1/commands", c.tokens["editor"], c.command(c.projA), &task); code != 200 {
		t.Errorf("editor launches a command in a: %d", code)
	}
	if code := c.newProject(t, "editor", c.wsA); code != 200 {
		t.Errorf("editor creates a project in a: %d", code)
	}
	if code := c.newProject(t, "editor", c.wsB); code != 403 {
		t.Errorf("editor creates a project in b: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/commands", c.tokens["editor"], c.command(c.projB), nil); code != 403 {
		t.Errorf("editor launches a command in b: %d", code)
	}
	if code := api(t, m, "PATCH", fmt.Sprintf("/api/v1/projects/%d", c.projB), c.tokens["editor"], `{"name":"mine"}`, nil); code != 403 && code != 404 {
		t.Errorf("editor renames b's project: %d", code)
	}
	if code := api(t, m, "GET", fmt.Sprintf("/api/v1/workspaces/%d", c.wsB), c.tokens["editor"], "", nil); code != 404 {
		t.Errorf("editor reads workspace b: %d, want 404", code)
	}
	if code := api(t, m, "PATCH", fmt.Sprintf("/api/v1/workspaces/%d", c.wsA), c.tokens["editor"], `{"name":"renamed"}`, nil); code != 403 {
		t.Errorf("editor renames their workspace: %d", code)
	}
	// Other people's tasks in the workspace are theirs to kill: the role
	// decides, not the owner.
	if code := api(t, m, "POST", "/api/v1/commands/"+task.Task.ID+"/kill", c.tokens["grouped"], "", nil); code != 200 {
		t.Errorf("a group editor kills the editor's command: %d", code)
	}

	// Lists show only what the roles reach.
	var wss resolute.WorkspacesResponse
	api(t, m, "GET", "/api/v1/workspaces", c.tokens["editor"], "", &wss)
	if len(wss.Workspaces) != 1 || wss.Workspaces[0].ID != c.wsA {
		t.Errorf("editor's workspaces: %+v", wss.Workspaces)
	}
	api(t, m, "GET", "/api/v1/workspaces", c.tokens["outsider"], "", &wss)
	if len(wss.Workspaces) != 0 {
		t.Errorf("outsider's workspaces: %+v", wss.Workspaces)
	}
	api(t, m, "GET", "/api/v1/workspaces", c.admin, "", &wss)
	if len(wss.Workspaces) != 3 {
		t.Errorf("admin's workspaces: %d, want 3 (the default one too)", len(wss.Workspaces))
	}
	var projects resolute.ProjectsResponse
	api(t, m, "GET", "/api/v1/projects", c.tokens["viewer"], "", &projects)
	for _, p := range projects.Projects {
		if p.WorkspaceID != c.wsA {
			t.Errorf("viewer lists project %q of workspace %d", p.Name, p.WorkspaceID)
		}
	}

	// A WorkspaceAdmin manages members in theirs only, and cannot hand out
	// cluster-wide roles.
	grant := func(ws int64, role string) int {
		return api(t, m, "POST", "/api/v1/roles/add-assignments", c.tokens["wsadmin"], fmt.Sprintf(
			`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":%q},"scopeWorkspaceId":%d}}]}`,
			c.ids["outsider"], role, ws), nil)
	}
	if code := grant(c.wsA, "Viewer"); code != 200 {
		t.Errorf("wsadmin grants Viewer in a: %d", code)
	}
	if code := grant(c.wsB, "Viewer"); code != 403 && code != 404 {
		t.Errorf("wsadmin grants Viewer in b: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/roles/add-assignments", c.tokens["wsadmin"], fmt.Sprintf(
		`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":"ClusterAdmin"}}}]}`, c.ids["wsadmin"]), nil); code != 403 {
		t.Errorf("wsadmin makes themselves ClusterAdmin: %d", code)
	}
	if code := api(t, m, "PATCH", fmt.Sprintf("/api/v1/workspaces/%d", c.wsA), c.tokens["wsadmin"], `{"name":"team-a2"}`, nil); code != 200 {
		t.Errorf("wsadmin renames their workspace: %d", code)
	}
	api(t, m, "GET", "/api/v1/workspaces", c.tokens["outsider"], "", &wss)
	if len(wss.Workspaces) != 1 {
		t.Errorf("outsider after the grant: %+v", wss.Workspaces)
	}
	// Groups: only administrators change them.
	if code := api(t, m, "PUT", fmt.Sprintf("/api/v1/groups/%d", c.group), c.tokens["wsadmin"],
		fmt.Sprintf(`{"addUsers":[%d]}`, c.ids["wsadmin"]), nil); code != 403 {
		t.Errorf("wsadmin joins a group: %d", code)
	}
}

func TestUnderRBACAGroupsRoleCountsForItsMembersOnlyWhileTheyAreMembers(t *testing.T) {
	c := newRBACCluster(t, true)
	m := c.m
	if code := c.newProject(t, "grouped", c.wsA); code != 200 {
		t.Errorf("group editor creates a project in a: %d", code)
	}
	if code := c.newProject(t, "grouped", c.wsB); code != 403 {
		t.Errorf("group editor creates a project in b: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/commands", c.tokens["grouped"], c.command(c.projA), nil); code != 200 {
		t.Errorf("group editor launches a command in a: %d", code)
	}
	// The group's WorkspaceAdmin role lets its members manage members.
	grantVia := func() int {
		return api(t, m, "POST", "/api/v1/roles/add-assignments", c.tokens["grouped"], fmt.Sprintf(
			`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":"Viewer"},"scopeWorkspaceId":%d}}]}`,
			c.ids["outsider"], c.wsA), nil)
	}
	if code := grantVia(); code != 403 {
		t.Errorf("a group Editor assigns roles: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/roles/add-assignments", c.admin, fmt.Sprintf(
		`{"groupRoleAssignments":[{"groupId":%d,"roleAssignment":{"role":{"name":"WorkspaceAdmin"},"scopeWorkspaceId":%d}}]}`,
		c.group, c.wsA), nil); code != 200 {
		t.Fatalf("admin grants the group WorkspaceAdmin: %d", code)
	}
	if code := grantVia(); code != 200 {
		t.Errorf("a group WorkspaceAdmin assigns roles: %d", code)
	}
	// Out of the group, nothing is left.
	if code := api(t, m, "PATCH", fmt.Sprintf("/api/v1/groups/%d", c.group), c.admin,
		fmt.Sprintf(`{"removeUsers":[%d]}`, c.ids["grouped"]), nil); code != 200 {
		t.Fatalf("remove from the group: %d", code)
	}
	if code := c.newProject(t, "grouped", c.wsA); code != 403 {
		t.Errorf("former member creates a project in a: %d", code)
	}
	var sum resolute.PermissionsSummary
	api(t, m, "GET", "/api/v1/permissions/summary", c.tokens["grouped"], "", &sum)
	if len(sum.Roles) != 0 || sum.AuthzType != "rbac" {
		t.Errorf("former member's permissions: %+v", sum)
	}
	// Every grant, revoke and membership change is in the master log with
	// who made it.
	var log []string
	lines, _ := m.Logs.Since(0, 0)
	for _, l := range lines {
		log = append(log, l.Message)
	}
	all := strings.Join(log, "\n")
	for _, want := range []string{
		`role assigned role=Editor to=group ml scope=workspace "team-a" by=admin`,
		`role assigned role=WorkspaceAdmin to=group ml`,
		`role assigned role=Viewer to=user outsider scope=workspace "team-a" by=grouped`,
		`user group member added group=ml user=grouped by=admin`,
		`user group member removed group=ml user=grouped by=admin`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the master log lacks %q", want)
		}
	}
}

func TestUnderBasicAuthorizationRolesDecideNothing(t *testing.T) {
	c := newRBACCluster(t, false)
	// No role anywhere, yet everyone creates everywhere, as before.
	if code := c.newProject(t, "outsider", c.wsB); code != 200 {
		t.Errorf("outsider creates a project in b: %d", code)
	}
	var wss resolute.WorkspacesResponse
	api(t, c.m, "GET", "/api/v1/workspaces", c.tokens["outsider"], "", &wss)
	if len(wss.Workspaces) != 3 {
		t.Errorf("outsider sees %d workspaces, want all 3", len(wss.Workspaces))
	}
	// And a Viewer's role does not stop what ownership allows.
	if code := api(t, c.m, "POST", "/api/v1/commands", c.tokens["viewer"], c.command(c.projA), nil); code != 200 {
		t.Errorf("a viewer launches under basic: %d", code)
	}
	// Only administrators assign roles.
	if code := api(t, c.m, "POST", "/api/v1/roles/add-assignments", c.tokens["wsadmin"], fmt.Sprintf(
		`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":"Viewer"},"scopeWorkspaceId":%d}}]}`,
		c.ids["outsider"], c.wsA), nil); code != 403 {
		t.Errorf("a WorkspaceAdmin assigns under basic: %d", code)
	}
}
