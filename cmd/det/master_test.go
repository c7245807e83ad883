package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestMasterInfo(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	var info resolute.MasterInfo
	if err := json.Unmarshal([]byte(c.ok("", "master", "info", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != resolute.Version || info.ClusterID == "" {
		t.Errorf("master info --json = %+v", info)
	}
	if text := c.ok("", "master", "info"); !strings.Contains(text, "Cluster ID:") || !strings.Contains(text, info.ClusterID) {
		t.Errorf("master info =\n%s", text)
	}
}

func TestMasterLogs(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	c.ok("", "workspace", "create", "a")
	c.ok("", "workspace", "create", "b")
	out := c.ok("", "master", "logs", "--tail", "1")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 || !strings.HasSuffix(lines[0], "INFO  workspace created workspace=b user=admin") {
		t.Errorf("master logs --tail 1 =\n%s", out)
	}
	if all := c.ok("", "master", "logs"); !strings.Contains(all, "workspace=a") || !strings.Contains(all, "user logged in") {
		t.Errorf("master logs =\n%s", all)
	}
	// Only administrators may read them.
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	r := c.run("", "master", "logs")
	if diff := cmp.Diff(result{stderr: "Error: only administrators may do this\n", code: 1}, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	out := c.ok("", "version")
	if !strings.HasPrefix(out, "client:\n  version: "+resolute.Version+"\nmaster:\n") || !strings.Contains(out, "master_address: "+c.m.URL) {
		t.Errorf("version =\n%s", out)
	}
	if !strings.Contains(out, "python_sdk: pip install --no-index --find-links "+c.m.URL+"/python/ determined\n") {
		t.Errorf("version does not say how to install the Python SDK:\n%s", out)
	}
	if got := c.ok("", "-v"); got != "det "+resolute.Version+"\n" {
		t.Errorf("-v = %q", got)
	}

	c.env["DET_MASTER"] = "127.0.0.1:1" // nothing listens there
	r := c.run("", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "client:\n  version: "+resolute.Version) ||
		!strings.Contains(r.stderr, "cannot reach the master at http://127.0.0.1:1") {
		t.Errorf("version with the master down: %+v", r)
	}
}

func TestMasterAddress(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		flag string
		env  map[string]string
		want string
	}{
		"the default": {want: "http://localhost:8080"},
		"DET_MASTER":  {env: map[string]string{"DET_MASTER": "https://det.example.com/"}, want: "https://det.example.com"},
		"DET_MASTER_ADDR when DET_MASTER is unset": {env: map[string]string{"DET_MASTER_ADDR": "10.1.2.3:8080"}, want: "http://10.1.2.3:8080"},
		"DET_MASTER before DET_MASTER_ADDR":        {env: map[string]string{"DET_MASTER": "a:1", "DET_MASTER_ADDR": "b:2"}, want: "http://a:1"},
		"-m before the environment":                {flag: "c:3", env: map[string]string{"DET_MASTER": "a:1"}, want: "http://c:3"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := &app{masterFlag: tc.flag, getenv: func(k string) string { return tc.env[k] }}
			if err := a.resolveMaster(); err != nil {
				t.Fatal(err)
			}
			if a.master != tc.want {
				t.Errorf("master = %q, want %q", a.master, tc.want)
			}
		})
	}
}

func TestPrefixesAndAliases(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	// A bare host:port in -m works too.
	bare := strings.TrimPrefix(c.m.URL, "http://")
	c.env["DET_MASTER"] = ""
	tests := map[string][]string{
		"the full words":         {"-m", bare, "user", "whoami"},
		"the short alias":        {"-m", bare, "u", "whoami"},
		"unambiguous prefixes":   {"-m", bare, "us", "who"},
		"prefixes with --master": {"--master", c.m.URL, "use", "whoa"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			if got := c.ok("", args...); got != "You are logged in as user 'admin'\n" {
				t.Errorf("det %s = %q", strings.Join(args, " "), got)
			}
		})
	}
	for _, args := range [][]string{{"w", "ls"}, {"p", "ls"}, {"work", "list"}, {"proj", "li"}} {
		c.ok("", append([]string{"-m", bare}, args...)...)
	}
}
