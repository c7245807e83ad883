package harness

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func python(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 available; skipping the harness's Python tests")
	}
	return p
}

// TestPython runs the harness's stdlib unittest suite (fake master, Core API,
// Determined's tutorial scripts). -B and PYTHONDONTWRITEBYTECODE keep
// __pycache__ out of the source tree.
func TestPython(t *testing.T) {
	py := python(t)
	cmd := exec.Command(py, "-B", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=.")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python tests failed: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}

func TestEmbeddedFiles(t *testing.T) {
	for _, want := range []string{
		"determined/__init__.py",
		"determined/_info.py",
		"determined/_session.py",
		"determined/core/__init__.py",
		"determined/core/_context.py",
		"determined/launch/torch_distributed.py",
		"determined/experimental/client.py",
		"determined/common/api/errors.py",
		"determined/common/experimental/checkpoint.py",
	} {
		if _, err := fs.Stat(Files, want); err != nil {
			t.Errorf("embedded package lacks %s: %v", want, err)
		}
	}
	err := fs.WalkDir(Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(path, "__pycache__") || strings.HasSuffix(path, ".pyc") {
			t.Errorf("embedded %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteTo checks the materialized package imports and reports off-cluster.
func TestWriteTo(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "determined", "core", "__init__.py")); err != nil {
		t.Fatal(err)
	}
	py := python(t)
	cmd := exec.Command(py, "-B", "-c",
		"import determined as det; assert det.get_cluster_info() is None; print(det.LOG_FORMAT)")
	env := []string{"PYTHONPATH=" + dir, "PYTHONDONTWRITEBYTECODE=1", "HOME=" + dir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DET_") && !strings.HasPrefix(kv, "PYTHONPATH=") &&
			!strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("import failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "%(levelname)s") {
		t.Fatalf("unexpected output %q", out)
	}
}
