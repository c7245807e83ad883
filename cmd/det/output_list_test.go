package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestListsTakeCSVLimitAndOffset: every list command's --csv is CSV a
// spreadsheet reads (a name with a comma stays one cell), and --limit and
// --offset page it, on experiments by the master.
func TestListsTakeCSVLimitAndOffset(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	for _, u := range []string{"ann", "bob", "cyd"} {
		c.ok("", "user", "create", u, "--password", "s3cret-pw")
	}
	cfg := writeConfig(t, "name: one, two\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n")
	var ids []string
	for range 3 {
		ids = append(ids, createdID(t, c.ok("", "experiment", "create", cfg, "--paused")))
	}

	readCSV := func(args ...string) [][]string {
		t.Helper()
		rows, err := csv.NewReader(strings.NewReader(c.ok("", args...))).ReadAll()
		if err != nil {
			t.Fatalf("det %v: not CSV: %v", args, err)
		}
		return rows
	}
	users := readCSV("user", "list", "--csv", "--offset", "1", "--limit", "2")
	if diff := cmp.Diff([][]string{{"ID", "Username", "Display Name", "Admin", "Active"}}, users[:1]); diff != "" {
		t.Errorf("user list --csv header (-want +got):\n%s", diff)
	}
	// admin, ann, bob, cyd, determined by name: the second and third.
	if len(users) != 3 || users[1][1] != "ann" || users[2][1] != "bob" {
		t.Errorf("user list --csv --offset 1 --limit 2 = %v", users)
	}

	exps := readCSV("experiment", "list", "--csv", "--limit", "2", "--offset", "1")
	if len(exps) != 3 || exps[0][0] != "ID" {
		t.Fatalf("experiment list --csv --limit 2 --offset 1 = %v", exps)
	}
	name := -1
	for i, h := range exps[0] {
		if h == "Name" {
			name = i
		}
	}
	if name < 0 || exps[1][name] != "one, two" {
		t.Errorf("a name with a comma is not one cell: %v", exps)
	}
	var page []resolute.Experiment
	if err := json.Unmarshal([]byte(c.ok("", "experiment", "list", "--json", "--limit", "1", "--offset", "2")), &page); err != nil {
		t.Fatal(err)
	}
	var all []resolute.Experiment
	json.Unmarshal([]byte(c.ok("", "experiment", "list", "--json")), &all)
	if len(all) != 3 || len(page) != 1 || page[0].ID != all[2].ID {
		t.Errorf("experiment list --limit 1 --offset 2 = %+v of %+v", page, all)
	}
	if out := c.ok("", "workspace", "list", "--json", "--offset", "10"); strings.TrimSpace(out) != "[]" {
		t.Errorf("an offset past the end is an empty list, got %q", out)
	}
	for _, args := range [][]string{
		{"agent", "list"}, {"slot", "list"}, {"job", "list"}, {"model", "list"}, {"template", "list"},
		{"workspace", "list"}, {"project", "list"}, {"task", "list"}, {"cmd", "list"}, {"notebook", "list"},
		{"experiment", "list-trials", ids[0]}, {"experiment", "list-checkpoints", ids[0]},
	} {
		if rows := readCSV(append(args, "--csv")...); len(rows) == 0 || len(rows[0]) < 2 {
			t.Errorf("det %v --csv = %v", args, rows)
		}
	}
	if r := c.run("", "user", "list", "--json", "--csv"); r.code != 2 {
		t.Errorf("--json with --csv: exit %d, want 2\n%s", r.code, r.stderr)
	}
	if r := c.run("", "user", "list", "--limit", "-1"); r.code != 2 {
		t.Errorf("a negative limit: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
