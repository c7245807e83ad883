package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestProjectListHasTheDefaultProject(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	// No login: det logs in as determined with the empty password, as Determined's does.
	var list []resolute.Project
	if err := json.Unmarshal([]byte(c.ok("", "project", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != resolute.DefaultProjectName || list[0].WorkspaceName != resolute.DefaultWorkspaceName {
		t.Errorf("project list --json = %+v", list)
	}
	table := c.ok("", "p", "ls")
	if !strings.HasPrefix(table, "ID  Workspace      Name           Description") {
		t.Errorf("project ls =\n%s", table)
	}
}

func TestProjectHelpSpellsArchiveAndUnarchive(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	help := c.ok("", "project", "--help")
	for _, want := range []string{"Archive a project", "Unarchive a project"} {
		if !strings.Contains(help, want) {
			t.Errorf("det project --help lacks %q:\n%s", want, help)
		}
	}
}

func TestProjects(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	c.ok("", "workspace", "create", "nlp")

	var p resolute.Project
	if err := json.Unmarshal([]byte(c.ok("", "project", "create", "nlp", "translation", "--description", "en-fr", "--json")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "translation" || p.WorkspaceName != "nlp" || p.Description != "en-fr" {
		t.Errorf("created %+v", p)
	}
	var byName, byID resolute.Project
	json.Unmarshal([]byte(c.ok("", "project", "describe", "nlp", "translation", "--json")), &byName)
	json.Unmarshal([]byte(c.ok("", "project", "describe", strconv.FormatInt(p.ID, 10), "--json")), &byID)
	if byName.ID != p.ID || byID.ID != p.ID {
		t.Errorf("describe by name = %d, by id = %d, want %d", byName.ID, byID.ID, p.ID)
	}
	if text := c.ok("", "project", "describe", "nlp", "translation"); !strings.Contains(text, "Workspace:") || !strings.Contains(text, "en-fr") {
		t.Errorf("describe =\n%s", text)
	}

	c.ok("", "project", "edit", "nlp", "translation", "--name", "mt", "--description", "machine translation")
	var list []resolute.Project
	json.Unmarshal([]byte(c.ok("", "project", "list", "nlp", "--json")), &list)
	if len(list) != 1 || list[0].Name != "mt" || list[0].Description != "machine translation" {
		t.Errorf("after edit: %+v", list)
	}

	c.ok("", "project", "archive", "nlp", "mt")
	if strings.Contains(c.ok("", "project", "list", "nlp"), "mt") {
		t.Errorf("an archived project is listed without --all")
	}
	if !strings.Contains(c.ok("", "project", "list", "nlp", "--all"), "mt") {
		t.Errorf("an archived project is missing from --all")
	}
	c.ok("", "project", "unarchive", "nlp", "mt")
	if got := c.ok("", "project", "delete", "nlp", "mt", "--yes"); got != "Successfully deleted project mt.\n" {
		t.Errorf("delete printed %q", got)
	}
	r := c.run("", "project", "describe", "nlp", "mt")
	if r.code != 1 || r.stderr != "Error: project \"mt\" not found in workspace \"nlp\"\n" {
		t.Errorf("describe after delete: %+v", r)
	}
}
