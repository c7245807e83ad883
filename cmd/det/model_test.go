package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// finishedCheckpoint runs the stdlib example to completion from the CLI
// and returns its best checkpoint.
func (c *cli) finishedCheckpoint(t *testing.T) resolute.Checkpoint {
	t.Helper()
	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t)))
	if got := c.ok("", "e", "wait", id, "--polling-interval", "0.2"); !strings.Contains(got, "COMPLETED") {
		t.Fatalf("wait: %q", got)
	}
	var best []resolute.Checkpoint
	if err := json.Unmarshal([]byte(c.ok("", "e", "lc", id, "--best", "1", "--json")), &best); err != nil || len(best) != 1 {
		t.Fatalf("lc --best 1: %+v %v", best, err)
	}
	return best[0]
}

func TestTheModelRegistryFromTheCLI(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	cp := c.finishedCheckpoint(t)

	if got := c.ok("", "model", "create", "digits", "--description", "an MLP"); got != "Created model digits in workspace Uncategorized\n" {
		t.Errorf("create printed %q", got)
	}
	if r := c.run("", "m", "create", "digits"); r.code != 1 || !strings.HasPrefix(r.stderr, `Error: model "digits" already exists`) {
		t.Errorf("a duplicate: %+v", r)
	}
	// One checkpoint may be registered more than once.
	for _, n := range []string{"1", "2"} {
		want := "Registered checkpoint " + cp.UUID + " as version " + n + " of model digits\n"
		if got := c.ok("", "m", "register-version", "digits", cp.UUID, "--comment", "run "+n); got != want {
			t.Errorf("register-version printed %q, want %q", got, want)
		}
	}
	if got := c.ok("", "m", "alias", "digits", "production", "1"); got != "Alias production of model digits now points at version 1\n" {
		t.Errorf("alias printed %q", got)
	}

	// describe --alias production --json is version 1's ModelVersion.
	var v resolute.ModelVersion
	if err := json.Unmarshal([]byte(c.ok("", "m", "describe", "digits", "--alias", "production", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != 1 || v.Comment != "run 1" || v.CheckpointUUID != cp.UUID || len(v.Aliases) != 1 || v.Aliases[0] != "production" || v.Validation == nil {
		t.Errorf("describe --alias production --json = %+v", v)
	}
	text := c.ok("", "m", "describe", "digits", "--latest")
	for _, want := range []string{"Comment:          run 2", cp.UUID, "validation_loss="} {
		if !strings.Contains(text, want) {
			t.Errorf("describe --latest lacks %q:\n%s", want, text)
		}
	}
	text = c.ok("", "m", "describe", "digits")
	if !strings.Contains(text, "an MLP") || !strings.Contains(text, "Checkpoint UUID") || !strings.Contains(text, "production") {
		t.Errorf("describe:\n%s", text)
	}
	if r := c.run("", "m", "describe", "digits", "--latest", "--version", "1"); r.code != 2 {
		t.Errorf("two version choices: %+v", r)
	}

	var versions []resolute.ModelVersion
	if err := json.Unmarshal([]byte(c.ok("", "m", "list-versions", "digits", "--json")), &versions); err != nil || len(versions) != 2 || versions[0].Version != 2 {
		t.Errorf("list-versions --json: %+v %v", versions, err)
	}
	c.ok("", "m", "create", "other", "--label", "vision")
	var list []resolute.Model
	if err := json.Unmarshal([]byte(c.ok("", "m", "ls", "--json", "--sort-by", "name")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "digits" || list[0].NumVersions != 2 || list[1].Name != "other" {
		t.Errorf("list --json --sort-by name: %+v", list)
	}
	if got := c.ok("", "m", "ls", "--label", "vision"); !strings.Contains(got, "other") || strings.Contains(got, "digits") {
		t.Errorf("list --label vision:\n%s", got)
	}
	c.ok("", "m", "archive", "other")
	if strings.Contains(c.ok("", "m", "ls"), "other") || !strings.Contains(c.ok("", "m", "ls", "--all"), "other") {
		t.Errorf("archived models show only with --all")
	}
	c.ok("", "m", "unarchive", "other")
	c.ok("", "workspace", "create", "vision")
	if got := c.ok("", "m", "move", "other", "vision"); got != "Moved model other to workspace vision\n" {
		t.Errorf("move printed %q", got)
	}

	// The alias moves, and goes.
	c.ok("", "m", "alias", "digits", "production", "2")
	json.Unmarshal([]byte(c.ok("", "m", "describe", "digits", "--alias", "production", "--json")), &v)
	if v.Version != 2 {
		t.Errorf("the alias did not move: %+v", v)
	}
	c.ok("", "m", "alias", "digits", "production", "--remove")
	if r := c.run("", "m", "describe", "digits", "--alias", "production"); r.code != 1 || !strings.Contains(r.stderr, `alias "production" of model "digits" not found`) {
		t.Errorf("describe of a removed alias: %+v", r)
	}
	if r := c.run("", "m", "alias", "digits", "production"); r.code != 2 {
		t.Errorf("alias without a version or --remove: %+v", r)
	}

	// Download the version's checkpoint.
	out := t.TempDir()
	got := c.ok("", "m", "download", "digits", "--version", "1", "-o", filepath.Join(out, "v1"))
	if !strings.Contains(got, "Version 1 of model digits is checkpoint "+cp.UUID) {
		t.Errorf("download printed %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "v1", "model.json")); err != nil {
		t.Errorf("download: %v", err)
	}

	// Delete asks first, saying how many versions go.
	r := c.run("", "m", "delete", "digits")
	if r.code != 2 || !strings.Contains(r.stderr, "Delete model digits and its 2 versions?") || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("delete without --yes: %+v", r)
	}
	if got := c.ok("", "m", "delete", "digits", "--yes"); got != "Deleted model digits and its 2 versions.\n" {
		t.Errorf("delete printed %q", got)
	}
	if r := c.run("", "m", "describe", "digits"); r.code != 1 || !strings.HasPrefix(r.stderr, `Error: model "digits" not found`) {
		t.Errorf("describe of a deleted model: %+v", r)
	}
}
