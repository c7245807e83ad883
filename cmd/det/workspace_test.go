package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestWorkspaces(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()

	var ws resolute.Workspace
	if err := json.Unmarshal([]byte(c.ok("", "workspace", "create", "vision", "--json")), &ws); err != nil {
		t.Fatal(err)
	}
	if ws.Name != "vision" || ws.Username != "admin" {
		t.Errorf("created %+v", ws)
	}
	c.ok("", "project", "create", "vision", "cats", "--description", "cat detector")

	var described resolute.Workspace
	if err := json.Unmarshal([]byte(c.ok("", "w", "describe", "vision", "--json")), &described); err != nil {
		t.Fatal(err)
	}
	if described.ID != ws.ID || described.NumProjects != 1 {
		t.Errorf("describe --json = %+v", described)
	}
	text := c.ok("", "workspace", "describe", "vision")
	if !strings.Contains(text, "Associated Projects") || !strings.Contains(text, "cat detector") {
		t.Errorf("describe =\n%s", text)
	}
	var projects []resolute.Project
	if err := json.Unmarshal([]byte(c.ok("", "w", "list-projects", "vision", "--json")), &projects); err != nil {
		t.Fatal(err)
	}
	if len(projects) != 1 || projects[0].Name != "cats" {
		t.Errorf("list-projects = %+v", projects)
	}

	c.ok("", "workspace", "archive", "vision")
	if strings.Contains(c.ok("", "workspace", "list"), "vision") {
		t.Errorf("an archived workspace is listed without --all")
	}
	if !strings.Contains(c.ok("", "workspace", "ls", "--all"), "vision") {
		t.Errorf("an archived workspace is missing from --all")
	}
	c.ok("", "workspace", "unarchive", "vision")
	c.ok("", "workspace", "edit", "vision", "--name", "sight")

	r := c.run("", "workspace", "delete", "sight")
	if r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("delete without --yes and without a terminal: %+v", r)
	}
	r = c.run("", "workspace", "delete", "sight", "--yes")
	if r.code != 1 || !strings.HasPrefix(r.stderr, `Error: workspace "sight" is not empty`) {
		t.Errorf("deleting a workspace with a project: %+v", r)
	}
	c.ok("", "project", "delete", "sight", "cats", "--yes")
	if got := c.ok("", "workspace", "delete", "sight", "--yes"); got != "Successfully deleted workspace sight.\n" {
		t.Errorf("delete printed %q", got)
	}
	var list []resolute.Workspace
	if err := json.Unmarshal([]byte(c.ok("", "workspace", "list", "--json", "--all")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != resolute.DefaultWorkspaceName {
		t.Errorf("workspaces left: %+v", list)
	}
}

func TestServerErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	c.ok("", "workspace", "create", "x")
	tests := map[string]struct {
		args []string
		want result
	}{
		"a duplicate workspace": {
			args: []string{"workspace", "create", "x"},
			want: result{stderr: "Error: workspace \"x\" already exists\n", code: 1},
		},
		"an unknown workspace": {
			args: []string{"workspace", "describe", "nope"},
			want: result{stderr: "Error: workspace \"nope\" not found\n", code: 1},
		},
		"the default workspace cannot be archived": {
			args: []string{"workspace", "archive", "Uncategorized"},
			want: result{stderr: "Error: the default workspace \"Uncategorized\" cannot be archived\n", code: 1},
		},
		"an unknown project": {
			args: []string{"project", "describe", "x", "nope"},
			want: result{stderr: "Error: project \"nope\" not found in workspace \"x\"\n", code: 1},
		},
		"an empty name is rejected by the server": {
			args: []string{"workspace", "create", ""},
			want: result{stderr: "Error: name: must not be empty\n", code: 1},
		},
		"an unknown command is a usage error": {
			args: []string{"workspace", "frobnicate"},
			want: result{stderr: "Error: unknown command \"frobnicate\" for \"det workspace\"\nRun 'det workspace --help' for usage.\n", code: 2},
		},
		"an unknown flag is a usage error": {
			args: []string{"workspace", "list", "--frob"},
			want: result{stderr: "Error: unknown flag: --frob\n", code: 2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := c.run("", tc.args...)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
