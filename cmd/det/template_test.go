package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestTemplateCommands(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	file := filepath.Join(t.TempDir(), "tpl.yaml")
	os.WriteFile(file, []byte("# team defaults\nmax_restarts: 2\n"), 0o600)

	if out := c.ok("", "template", "create", "team", file); !strings.Contains(out, "Created template team in workspace Uncategorized.") {
		t.Fatalf("create: %q", out)
	}
	if out := c.ok("", "template", "describe", "team"); out != "# team defaults\nmax_restarts: 2\n" {
		t.Fatalf("describe prints the YAML as written: %q", out)
	}
	if out := c.ok("", "tpl", "ls"); !strings.Contains(out, "team") || !strings.Contains(out, "Uncategorized") {
		t.Fatalf("list: %q", out)
	}
	r := c.run("", "template", "create", "team", file)
	if r.code != 1 || !strings.Contains(r.stderr, `Error: template "team" already exists`) {
		t.Fatalf("duplicate: %+v", r)
	}
	if r := c.run("max_restart: 3\n", "template", "set", "team", "-"); r.code != 1 ||
		!strings.Contains(r.stderr, "max_restart: unknown key (did you mean max_restarts?)") {
		t.Fatalf("bad set: %+v", r)
	}
	c.ok("max_restarts: 4\n", "template", "set", "team", "-")
	var list []struct{ Name, YAML string }
	if err := json.Unmarshal([]byte(c.ok("", "template", "list", "--json")), &list); err != nil || len(list) != 1 || list[0].YAML != "max_restarts: 4\n" {
		t.Fatalf("list --json: %+v %v", list, err)
	}
	c.ok("", "template", "rm", "team")
	if r := c.run("", "template", "describe", "team"); r.code != 1 || !strings.Contains(r.stderr, `template "team" not found`) {
		t.Fatalf("describe removed: %+v", r)
	}
}

const ashaConfig = `
name: asha
entrypoint: python3 train.py
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
searcher:
  name: adaptive_asha
  metric: validation_loss
  max_trials: 16
  max_time: 256
  time_metric: batches
  divisor: 4
  max_rungs: 3
`

func TestPreviewSearch(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	dir := t.TempDir()
	good := filepath.Join(dir, "adaptive.yaml")
	os.WriteFile(good, []byte(ashaConfig), 0o600)
	out := c.ok("", "preview-search", good)
	for _, want := range []string{"adaptive_asha", "16"} {
		if !strings.Contains(out, want) {
			t.Errorf("preview lacks %q:\n%s", want, out)
		}
	}
	var plan struct{ Trials int }
	if err := json.Unmarshal([]byte(c.ok("", "preview-search", good, "--json", "--config", "searcher.max_trials=8")), &plan); err != nil || plan.Trials != 8 {
		t.Fatalf("--json with an override: %+v %v", plan, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(strings.Replace(ashaConfig, "  max_trials: 16\n", "", 1)+"resources: {slots_per_trail: 1}\n"), 0o600)
	r := c.run("", "preview-search", bad)
	if r.code != 1 || !strings.Contains(r.stderr, "searcher.max_trials: required when searcher.name is adaptive_asha") ||
		!strings.Contains(r.stderr, "resources.slots_per_trail: unknown key (did you mean slots_per_trial?)") {
		t.Fatalf("bad config: %+v", r)
	}
}
