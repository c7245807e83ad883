package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// contextDir copies the stdlib example into a temporary context directory
// with a file that .detignore leaves out.
func contextDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/core-api-stdlib/train.py")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"train.py":          string(src),
		"data/secret.bin":   "not for the master",
		"notes.tmp":         "scratch",
		".detignore":        "# big or private\ndata/\n*.tmp\n",
		".git/HEAD":         "ref: refs/heads/main\n",
		"lib/helpers.py":    "X = 1\n",
		"lib/__pycache__/x": "cache",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const constConfig = `name: cli-const
entrypoint: python3 train.py
hyperparameters: {lr: 0.1, batch_size: 16, max_steps: 50, train_size: 200}
searcher: {name: single, metric: validation_loss, smaller_is_better: true}
`

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var createdRE = regexp.MustCompile(`(?m)^Created experiment (\d+)$`)

// createdID reads the id from `det experiment create`'s output.
func createdID(t *testing.T, out string) string {
	t.Helper()
	m := createdRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no 'Created experiment N' in %q", out)
	}
	return m[1]
}

// tarGzNames lists the entries of a tar.gz file.
func tarGzNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(h.Name, "/"))
	}
}

func TestExperimentRunsFromTheCLI(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	dir := contextDir(t)

	out := c.ok("", "experiment", "create", writeConfig(t, constConfig), dir, "-f")
	id := createdID(t, out)
	if !strings.Contains(out, "|| ") {
		t.Errorf("-f printed no trial logs:\n%s", out)
	}
	if got := c.ok("", "e", "wait", id, "--polling-interval", "0.2"); got != "Experiment "+id+" terminated with state COMPLETED\n" {
		t.Fatalf("wait: %q", got)
	}

	// The uploaded context left out what .detignore lists.
	modelDef := filepath.Join(t.TempDir(), "model.tgz")
	c.ok("", "experiment", "download-model-def", id, "-o", modelDef)
	names := tarGzNames(t, modelDef)
	for _, want := range []string{"train.py", "lib/helpers.py", ".detignore"} {
		if !slices.Contains(names, want) {
			t.Errorf("model def lacks %s: %v", want, names)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "data") || strings.HasSuffix(name, ".tmp") || strings.Contains(name, ".git/") || strings.Contains(name, "__pycache__") {
			t.Errorf("model def holds %s: %v", name, names)
		}
	}

	if list := c.ok("", "e", "ls"); !strings.Contains(list, "cli-const") || !strings.Contains(list, "COMPLETED") {
		t.Errorf("list:\n%s", list)
	}
	var exps []resolute.Experiment
	if err := json.Unmarshal([]byte(c.ok("", "experiment", "list", "--json")), &exps); err != nil || len(exps) != 1 || strconv.FormatInt(exps[0].ID, 10) != id {
		t.Fatalf("list --json: %+v %v", exps, err)
	}
	var described struct {
		Experiment resolute.Experiment
		Trials     []resolute.Trial
	}
	if err := json.Unmarshal([]byte(c.ok("", "e", "describe", id, "--json")), &described); err != nil || len(described.Trials) != 1 {
		t.Fatalf("describe --json: %+v %v", described, err)
	}
	trial := strconv.FormatInt(described.Trials[0].ID, 10)
	if text := c.ok("", "e", "describe", id); !strings.Contains(text, "validation_loss (smaller is better)") || !strings.Contains(text, "Trial ID") {
		t.Errorf("describe:\n%s", text)
	}
	if cfg := c.ok("", "e", "config", id); !strings.Contains(cfg, "name: cli-const\n") || !strings.Contains(cfg, "  metric: validation_loss\n") {
		t.Errorf("config:\n%s", cfg)
	}
	if lt := c.ok("", "e", "lt", id); !strings.Contains(lt, trial) || !strings.Contains(lt, "COMPLETED") {
		t.Errorf("list-trials:\n%s", lt)
	}
	if logs := c.ok("", "e", "logs", id); !strings.Contains(logs, "|| ") {
		t.Errorf("experiment logs:\n%s", logs)
	}

	// Checkpoints: the best one by validation_loss, downloaded three ways.
	var best []resolute.Checkpoint
	if err := json.Unmarshal([]byte(c.ok("", "e", "lc", id, "--best", "1", "--json")), &best); err != nil || len(best) != 1 {
		t.Fatalf("lc --best 1: %+v %v", best, err)
	}
	uuid := best[0].UUID
	if desc := c.ok("", "checkpoint", "describe", uuid); !strings.Contains(desc, uuid) || !strings.Contains(desc, "COMPLETED") {
		t.Errorf("checkpoint describe:\n%s", desc)
	}
	out = t.TempDir()
	c.ok("", "e", "download", id, "-o", out)
	if _, err := os.Stat(filepath.Join(out, uuid, "model.json")); err != nil {
		t.Errorf("experiment download: %v", err)
	}
	got := c.ok("", "t", "download", trial, "--best", "-o", filepath.Join(out, "best"))
	if !strings.HasPrefix(got, "Local checkpoint path:\n") {
		t.Errorf("trial download printed %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "best", "model.json")); err != nil {
		t.Errorf("trial download: %v", err)
	}
	c.ok("", "c", "download", uuid, "-o", filepath.Join(out, "by-uuid"))
	if _, err := os.Stat(filepath.Join(out, "by-uuid", "model.json")); err != nil {
		t.Errorf("checkpoint download: %v", err)
	}
	if r := c.run("", "t", "download", trial); r.code != 2 {
		t.Errorf("trial download without a choice: %+v", r)
	}

	var tr resolute.TrialResponse
	if err := json.Unmarshal([]byte(c.ok("", "trial", "describe", trial, "--json")), &tr); err != nil || len(tr.LatestMetrics) == 0 {
		t.Fatalf("trial describe --json: %+v %v", tr, err)
	}
	if text := c.ok("", "trial", "describe", trial); !strings.Contains(text, "validation_loss=") {
		t.Errorf("trial describe:\n%s", text)
	}

	// Edits.
	c.ok("", "e", "set", "name", id, "renamed")
	c.ok("", "e", "set", "priority", id, "10")
	if got := c.ok("", "e", "label", "add", id, "good"); got != "Added label 'good' to experiment "+id+"\n" {
		t.Errorf("label add: %q", got)
	}
	json.Unmarshal([]byte(c.ok("", "e", "describe", id, "--json")), &described)
	if e := described.Experiment; e.Name != "renamed" || !slices.Equal(e.Labels, []string{"good"}) || e.Priority == nil || *e.Priority != 10 {
		t.Errorf("after set and label: %+v", e)
	}
	if r := c.run("", "e", "set", "priority", id, "high"); r.code != 2 {
		t.Errorf("a non-integer priority: %+v", r)
	}

	c.ok("", "e", "archive", id)
	if strings.Contains(c.ok("", "e", "list"), "renamed") || !strings.Contains(c.ok("", "e", "list", "--all"), "renamed") {
		t.Errorf("archived experiments show only with --all")
	}
	c.ok("", "e", "unarchive", id)
	if got := c.ok("", "e", "delete", id, "--yes"); got != "Successfully deleted experiment "+id+".\n" {
		t.Errorf("delete: %q", got)
	}
	if r := c.run("", "e", "describe", id); r.code != 1 {
		t.Errorf("describe of a deleted experiment: %+v", r)
	}
}

func TestExperimentStateChangesFromTheCLI(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	cfg := writeConfig(t, "name: sleeper\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n")
	id := createdID(t, c.ok("", "experiment", "create", cfg, "--paused"))

	state := func() string {
		var e struct{ Experiment resolute.Experiment }
		json.Unmarshal([]byte(c.ok("", "e", "describe", id, "--json")), &e)
		return e.Experiment.State
	}
	if s := state(); s != resolute.StatePaused {
		t.Fatalf("created --paused: %s", s)
	}
	if got := c.ok("", "e", "activate", id); got != "Activated experiment "+id+"\n" {
		t.Errorf("activate: %q", got)
	}
	if s := state(); s != resolute.StateActive {
		t.Fatalf("after activate: %s", s)
	}
	c.ok("", "e", "pause", id)
	if s := state(); s != resolute.StatePaused && s != "STOPPING_PAUSED" {
		t.Errorf("after pause: %s", s)
	}
	c.ok("", "e", "unpause", id)

	r := c.run("", "e", "delete", id)
	if r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("delete without --yes and without a terminal: %+v", r)
	}
	r = c.run("", "e", "delete", id, "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "cancel or kill it before deleting it") {
		t.Errorf("delete of a running experiment: %+v", r)
	}
	if r := c.run("", "e", "archive", id); r.code != 1 {
		t.Errorf("archive of a running experiment: %+v", r)
	}

	c.ok("", "e", "kill", id)
	r = c.run("", "e", "wait", id, "--polling-interval", "0.2")
	if r.code != 1 || !strings.Contains(r.stdout, "terminated with state CANCELED") || !strings.Contains(r.stderr, "did not complete") {
		t.Errorf("wait on a killed experiment: %+v", r)
	}
	c.ok("", "e", "delete", id, "--yes")
}

func TestExperimentCommandErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	if r := c.run("", "e", "describe", "abc"); r.code != 2 || !strings.Contains(r.stderr, "expected a positive integer id") {
		t.Errorf("a bad id: %+v", r)
	}
	if r := c.run("", "e", "describe", "999"); r.code != 1 || !strings.HasPrefix(r.stderr, "Error: ") {
		t.Errorf("a missing experiment: %+v", r)
	}
	bad := writeConfig(t, "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trail: 1}\n")
	if r := c.run("", "e", "create", bad, contextDir(t)); r.code != 1 || !strings.Contains(r.stderr, "did you mean slots_per_trial?") {
		t.Errorf("an invalid config: %+v", r)
	}
}

// TestALargeContextIsRefused is not parallel: it lowers the package's limit.
func TestALargeContextIsRefused(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	// A lowered limit stands in for a 96 MiB directory.
	old := maxContextBytes
	maxContextBytes = 1000
	t.Cleanup(func() { maxContextBytes = old })
	r := c.run("", "e", "create", writeConfig(t, constConfig), contextDir(t))
	if r.code != 1 || !strings.Contains(r.stderr, "the limit is 1000 B") || !strings.Contains(r.stderr, "train.py") {
		t.Errorf("a too-large context: %+v", r)
	}
	if list := c.ok("", "e", "list", "--all"); strings.Count(list, "\n") != 2 {
		t.Errorf("a refused create left an experiment:\n%s", list)
	}
}

func TestALargeUploadShowsProgress(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	dir := contextDir(t)
	// Random bytes do not compress: the archive stays over 1 MiB.
	data := make([]byte, 3<<20)
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "weights.bin"), data, 0o644)

	r := c.run("", "e", "create", writeConfig(t, constConfig), dir, "--paused")
	if r.code != 0 || !strings.Contains(r.stderr, "\rUploading context: 100% (3.0 MiB of 3.0 MiB)\n") {
		t.Fatalf("create: %+v", r)
	}
	id := createdID(t, r.stdout)
	modelDef := filepath.Join(t.TempDir(), "m.tgz")
	c.ok("", "e", "download-model-def", id, "-o", modelDef)
	if names := tarGzNames(t, modelDef); !slices.Contains(names, "weights.bin") {
		t.Errorf("model def: %v", names)
	}
	c.ok("", "e", "kill", id)
}
