package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// cli runs det in-process against one master, with its own config dir and
// environment.
type cli struct {
	t      *testing.T
	m      *handlerstest.Master
	env    map[string]string
	config string // XDG_CONFIG_HOME
}

// result is what one det invocation did.
type result struct {
	stdout, stderr string
	code           int
}

func newCLI(t *testing.T, opts handlerstest.Options) *cli {
	t.Helper()
	m := handlerstest.Start(t, opts)
	dir := t.TempDir()
	return &cli{t: t, m: m, config: dir, env: map[string]string{"DET_MASTER": m.URL, "XDG_CONFIG_HOME": dir}}
}

// run runs det with args and stdin, as main would, and returns what it
// printed and its exit status.
func (c *cli) run(stdin string, args ...string) result {
	c.t.Helper()
	var out, errOut strings.Builder
	getenv := func(k string) string { return c.env[k] }
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, getenv)
	code := 0
	if err != nil {
		code = report(&errOut, err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// ok runs det and fails the test unless it exits 0; it returns stdout.
func (c *cli) ok(stdin string, args ...string) string {
	c.t.Helper()
	r := c.run(stdin, args...)
	if r.code != 0 {
		c.t.Fatalf("det %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// loginAdmin logs in as admin with the empty password of a new cluster.
func (c *cli) loginAdmin() {
	c.t.Helper()
	c.ok("", "user", "login", "admin")
}

func (c *cli) authFile() string {
	return filepath.Join(c.config, "resolute", "auth.json")
}
