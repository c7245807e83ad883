package main

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestRBACVerbs follows Determined's RBAC walkthrough with det against a
// master under security.authz.type: rbac: groups, roles in a workspace, and
// what each member may then do.
func TestRBACVerbs(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{RBAC: true})
	c.loginAdmin()
	for _, u := range []string{"mle-00", "mle-01", "mle-stop"} {
		c.ok("", "user", "create", u, "--password", "s3cret-pw")
	}
	c.ok("", "workspace", "create", "Traffic Lights")
	c.ok("", "workspace", "create", "Stop Signs")
	c.ok("", "user-group", "create", "Traffic Team")
	c.ok("", "user-group", "add-user", "Traffic Team", "mle-00,mle-01")
	if out := c.ok("", "user-group", "describe", "Traffic Team"); !strings.Contains(out, "mle-00") || !strings.Contains(out, "mle-01") {
		t.Errorf("describe =\n%s", out)
	}
	c.ok("", "rbac", "assign-role", "-g", "Traffic Team", "-w", "Traffic Lights", "Editor")
	c.ok("", "rbac", "assign-role", "-u", "mle-stop", "-w", "Stop Signs", "WorkspaceAdmin")
	if out := c.ok("", "rbac", "list-groups-roles", "Traffic Team"); !strings.Contains(out, "Editor") || !strings.Contains(out, "Traffic Lights") {
		t.Errorf("list-groups-roles =\n%s", out)
	}
	if out := c.ok("", "rbac", "list-users-roles", "mle-stop"); !strings.Contains(out, "WorkspaceAdmin") || !strings.Contains(out, "Stop Signs") || strings.Contains(out, "Editor") {
		t.Errorf("list-users-roles =\n%s", out)
	}
	if out := c.ok("", "rbac", "describe-role", "WorkspaceAdmin"); !strings.Contains(out, "mle-stop") || !strings.Contains(out, "PERMISSION_TYPE_ASSIGN_ROLES") {
		t.Errorf("describe-role =\n%s", out)
	}
	if out := c.ok("", "rbac", "list-roles"); !strings.Contains(out, "EditorRestricted (id 7") || !strings.Contains(out, "ClusterAdmin (id 1, cluster-wide only)") {
		t.Errorf("list-roles =\n%s", out)
	}

	// A member of the group creates a project in their workspace, not in
	// the other, which they do not see.
	c.env["DET_PASS"] = "s3cret-pw"
	c.ok("", "user", "login", "mle-01")
	c.ok("", "project", "create", "Traffic Lights", "Green")
	if r := c.run("", "project", "create", "Stop Signs", "Euro"); r.code == 0 {
		t.Errorf("mle-01 created a project in Stop Signs: %+v", r)
	}
	if out := c.ok("", "workspace", "list"); strings.Contains(out, "Stop Signs") || !strings.Contains(out, "Traffic Lights") {
		t.Errorf("mle-01's workspaces =\n%s", out)
	}
	if out := c.ok("", "rbac", "my-permissions"); !strings.Contains(out, "Editor in Traffic Lights") {
		t.Errorf("my-permissions =\n%s", out)
	}
	// The Stop Signs admin assigns roles in theirs only.
	c.ok("", "user", "login", "mle-stop")
	c.ok("", "rbac", "assign-role", "-u", "mle-00", "-w", "Stop Signs", "Viewer")
	if r := c.run("", "rbac", "assign-role", "-u", "mle-00", "-w", "Traffic Lights", "Viewer"); r.code == 0 {
		t.Errorf("mle-stop assigned a role in Traffic Lights: %+v", r)
	}
	delete(c.env, "DET_PASS")
	c.ok("", "user", "login", "admin")
	c.ok("", "rbac", "unassign-role", "-u", "mle-00", "-w", "Stop Signs", "Viewer")
	c.ok("", "user-group", "remove-user", "Traffic Team", "mle-01")
	c.ok("", "user-group", "delete", "Traffic Team", "--yes")
	if out := c.ok("", "user-group", "list"); strings.Contains(out, "Traffic Team") {
		t.Errorf("a deleted group is listed:\n%s", out)
	}
}
