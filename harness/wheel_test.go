package harness

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheWheelsVersionFollowsDeterminedsAndTheMasters(t *testing.T) {
	for master, want := range map[string]string{
		"0.1.0-dev":  "0.38.1+resolute.0.1.0.dev",
		"1.2.3":      "0.38.1+resolute.1.2.3",
		"v2.0 (RC)":  "0.38.1+resolute.v2.0.rc",
		"":           "0.38.1+resolute",
		"---":        "0.38.1+resolute",
		"0.5.0+meta": "0.38.1+resolute.0.5.0.meta",
	} {
		if got := WheelVersion(master); got != want {
			t.Errorf("WheelVersion(%q) = %q, want %q", master, got, want)
		}
	}
}

// TestTheWheelHoldsThePackageAndARecordPipCanCheck reads the wheel as pip
// does: every file of the package, __version__ set to the wheel's version,
// the dist-info files, and a RECORD whose hashes and sizes match.
func TestTheWheelHoldsThePackageAndARecordPipCanCheck(t *testing.T) {
	w, err := BuildWheel("1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "determined-0.38.1+resolute.1.2.3-py3-none-any.whl" {
		t.Errorf("name %s", w.Name)
	}
	again, _ := BuildWheel("1.2.3")
	if again != w {
		t.Error("the same version was built twice")
	}
	zr, err := zip.NewReader(bytes.NewReader(w.Data), int64(len(w.Data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	info := "determined-0.38.1+resolute.1.2.3.dist-info/"
	for _, name := range []string{"determined/__init__.py", "determined/experimental/client.py",
		"determined/common/api/errors.py", "determined/core/_context.py", info + "METADATA", info + "WHEEL", info + "RECORD"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the wheel lacks %s", name)
		}
	}
	if !bytes.Contains(files["determined/__init__.py"], []byte(`__version__ = "0.38.1+resolute.1.2.3"`)) {
		t.Error("__version__ is not the wheel's version")
	}
	if !bytes.Contains(files[info+"WHEEL"], []byte("Tag: py3-none-any\n")) || !bytes.Contains(files[info+"METADATA"], []byte("Name: determined\n")) {
		t.Errorf("dist-info:\n%s\n%s", files[info+"WHEEL"], files[info+"METADATA"])
	}
	recorded := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(files[info+"RECORD"])), "\n") {
		parts := strings.Split(line, ",")
		recorded[parts[0]] = true
		if parts[0] == info+"RECORD" {
			continue
		}
		sum := sha256.Sum256(files[parts[0]])
		want := fmt.Sprintf("sha256=%s,%d", base64.RawURLEncoding.EncodeToString(sum[:]), len(files[parts[0]]))
		if parts[1]+","+parts[2] != want {
			t.Errorf("RECORD %s: %s,%s, want %s", parts[0], parts[1], parts[2], want)
		}
	}
	for name := range files {
		if !recorded[name] {
			t.Errorf("RECORD lacks %s", name)
		}
		if strings.Contains(name, "__pycache__") || strings.Contains(name, "/tests/") {
			t.Errorf("the wheel holds %s", name)
		}
	}
}

// TestPipInstallsTheWheelOfflineIntoAFreshVenv installs the wheel with the
// pip of a new virtual environment of Debian's Python (the pyenv one when
// that is missing), with no index, and imports the SDK from it.
func TestPipInstallsTheWheelOfflineIntoAFreshVenv(t *testing.T) {
	py := python(t)
	w, err := BuildWheel("1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whl := filepath.Join(dir, w.Name)
	if err := os.WriteFile(whl, w.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Skipf("%s cannot make a venv: %v\n%s", py, err, out)
	}
	env := []string{"HOME=" + dir, "PYTHONDONTWRITEBYTECODE=1", "PATH=" + os.Getenv("PATH")}
	pyv := filepath.Join(venv, "bin", "python")
	var install *exec.Cmd
	if _, err := os.Stat(filepath.Join(venv, "bin", "pip")); err == nil {
		install = exec.Command(pyv, "-m", "pip", "install", "--no-index", whl)
	} else {
		// No pip in the venv (Debian without python3-venv's pip): install into a target dir.
		install = exec.Command(py, "-m", "pip", "install", "--no-index", "--target", filepath.Join(dir, "site"), whl)
		env = append(env, "PYTHONPATH="+filepath.Join(dir, "site"))
	}
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	check := exec.Command(pyv, "-c", "import determined, importlib.metadata as m\n"+
		"from determined.experimental import client\n"+
		"from determined.common.api.errors import NotFoundException\n"+
		"print(determined.__file__, determined.__version__, m.version('determined'))")
	check.Env, check.Dir = env, dir
	out, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("import from the installed wheel: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), dir) || strings.Count(string(out), "0.38.1+resolute.1.2.3") != 2 {
		t.Errorf("installed: %s", out)
	}
}
