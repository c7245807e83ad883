package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// detCLI is det, built from cmd/det, logged in to a test master as admin
// with a config directory of its own.
type detCLI struct {
	path string
	env  []string
}

// newDetCLI builds det and logs it in to m as admin, whose password is
// password (det login needs one).
func newDetCLI(tb testing.TB, m *handlerstest.Master, password string) *detCLI {
	tb.Helper()
	d := &detCLI{
		path: buildDet(tb),
		env:  []string{"DET_MASTER=" + m.URL, "XDG_CONFIG_HOME=" + tb.TempDir(), "HOME=" + tb.TempDir(), "DET_PASS=" + password},
	}
	d.run(tb, "", "user", "login", "admin")
	return d
}

// run runs det in directory dir and returns its output.
func (d *detCLI) run(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(os.Environ(), "DET_MASTER", "DET_USER", "DET_PASS", "DET_USER_TOKEN"), d.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("det %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// create runs `det experiment create CONFIG . FLAGS...` in dir, as a person
// in a model's directory does, and returns the experiment's ID.
func (d *detCLI) create(tb testing.TB, dir, config string, flags ...string) int64 {
	tb.Helper()
	out := d.run(tb, dir, append([]string{"experiment", "create", config, "."}, flags...)...)
	m := regexp.MustCompile(`Created experiment (\d+)`).FindStringSubmatch(out)
	if m == nil {
		tb.Fatalf("det experiment create %s: %s", config, out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}
