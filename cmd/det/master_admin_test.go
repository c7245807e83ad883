package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/masterconf"
)

// TestMasterConfigShowsTheConfigWithSecretsMasked: an administrator sees
// the running master's configuration as YAML or JSON, its passwords and
// storage keys masked; another user is refused.
func TestMasterConfigShowsTheConfigWithSecretsMasked(t *testing.T) {
	cfg := masterconf.Default()
	cfg.DB = masterconf.DB{Host: "db.internal", Password: "db-pw-123"}
	cfg.CheckpointStorage = map[string]any{"type": "s3", "bucket": "ckpts", "secret_key": "sk-456"}
	shown, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, handlerstest.Options{MasterConfig: shown})
	c.loginAdmin()
	out := c.ok("", "master", "config")
	for _, want := range []string{"host: db.internal", "bucket: ckpts", "password: '" + resolute.Masked + "'"} {
		if !strings.Contains(out, want) {
			t.Errorf("det master config lacks %q:\n%s", want, out)
		}
	}
	var asJSON map[string]any
	if err := json.Unmarshal([]byte(c.ok("", "master", "config", "show", "--json")), &asJSON); err != nil {
		t.Fatal(err)
	}
	if db, _ := asJSON["db"].(map[string]any); db["host"] != "db.internal" || db["password"] != resolute.Masked {
		t.Errorf("det master config --json db = %v", asJSON["db"])
	}
	for _, secret := range []string{"db-pw-123", "sk-456"} {
		if strings.Contains(out, secret) {
			t.Errorf("det master config shows the secret %q", secret)
		}
	}
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	if r := c.run("", "master", "config"); r.code != 1 || !strings.Contains(r.stderr, "only administrators") {
		t.Errorf("a user who is not an administrator: exit %d %s", r.code, r.stderr)
	}
}

// TestClusterMessageSetGetAndClear: Determined's flags set a message (-m
// after set is the message), get shows it with its window, only
// administrators set or clear it, and bad windows are refused.
func TestClusterMessageSetGetAndClear(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	if out := c.ok("", "master", "cluster-message", "get"); out != "No cluster message\n" {
		t.Errorf("get before any: %q", out)
	}
	if out := c.ok("", "master", "cluster-message", "set", "-m", "Maintenance at 18:00", "-d", "2d"); !strings.Contains(out, "Set the cluster message, shown from") {
		t.Errorf("set: %q", out)
	}
	var got resolute.ClusterMessageResponse
	if err := json.Unmarshal([]byte(c.ok("", "master", "cluster-message", "get", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	m := got.ClusterMessage
	if m == nil || m.Message != "Maintenance at 18:00" || m.EndTime == nil || m.EndTime.Sub(m.StartTime) != 48*time.Hour {
		t.Fatalf("get --json = %+v", m)
	}
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	end := time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	c.ok("", "master", "cluster-message", "set", "--message", "Upgrade tonight", "--start", start, "--end", end)
	if out := c.ok("", "master", "cluster-message", "get"); !strings.Contains(out, "Upgrade tonight") || strings.Contains(out, "Maintenance") {
		t.Errorf("a second set replaces the first:\n%s", out)
	}
	for name, args := range map[string][]string{
		"--end and --duration together": {"-m", "x", "-e", end, "-d", "1h"},
		"a start that is not RFC 3339":  {"-m", "x", "-s", "tomorrow"},
		"no message":                    {"-d", "1h"},
	} {
		if r := c.run("", append([]string{"master", "cluster-message", "set"}, args...)...); r.code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, r.code, r.stderr)
		}
	}
	if r := c.run("", "master", "cluster-message", "set", "-m", "x", "-s", end, "-e", start); r.code != 1 || !strings.Contains(r.stderr, "must be after the start") {
		t.Errorf("an end before the start: exit %d %s", r.code, r.stderr)
	}
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	if out := c.ok("", "master", "cluster-message", "get"); !strings.Contains(out, "Upgrade tonight") {
		t.Errorf("every user reads the message:\n%s", out)
	}
	for _, args := range [][]string{{"set", "-m", "mine now"}, {"clear"}} {
		if r := c.run("", append([]string{"master", "cluster-message"}, args...)...); r.code != 1 || !strings.Contains(r.stderr, "only administrators") {
			t.Errorf("eve: det master cluster-message %v: exit %d %s", args, r.code, r.stderr)
		}
	}
	c.ok("", "-u", "admin", "master", "cluster-message", "clear")
	if out := c.ok("", "master", "cluster-message", "get"); out != "No cluster message\n" {
		t.Errorf("get after clear: %q", out)
	}
}
