// Package harness ships Resolute's Python harness: the package `determined`
// (Determined's Core API, `import determined as det`) that every task gets on
// its PYTHONPATH, so training scripts written for Determined run unchanged.
//
// The Python sources live in harness/determined/ and use only the standard
// library (Python 3.9–3.12). Files holds them, rooted at "determined/"; use
// WriteTo to materialize the package in a task's directory and put that
// directory on PYTHONPATH.
//
// The embed patterns list *.py files explicitly: a plain directory pattern
// would skip files whose names begin with "_" (every __init__.py), and
// "all:" would pick up __pycache__.
package harness

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// Files is the Python package `determined`, rooted at "determined/".
//
//go:embed determined/*.py determined/*/*.py determined/*/*/*.py
var Files embed.FS

// WriteTo writes the package into dir, creating dir/determined/...; dir is then
// what goes on PYTHONPATH. Existing files are overwritten.
func WriteTo(dir string) error {
	return fs.WalkDir(Files, "determined", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := Files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// Runtime is what every task gets from Install: the directory to put first
// on PYTHONPATH, and a directory to put first on PATH whose python3 and
// python run the task Python.
type Runtime struct {
	PythonPath string
	BinDir     string
	Python     string
}

// Install writes the package under dir/lib and links dir/bin/python3 and
// dir/bin/python to python (the task Python, e.g. /usr/bin/python3, which
// sees Debian's packages). It replaces what an earlier start wrote.
func Install(dir, python string) (Runtime, error) {
	if !filepath.IsAbs(python) {
		p, err := exec.LookPath(python)
		if err != nil {
			return Runtime{}, fmt.Errorf("the task Python %q is not installed: %w", python, err)
		}
		python = p
	}
	rt := Runtime{PythonPath: filepath.Join(dir, "lib"), BinDir: filepath.Join(dir, "bin"), Python: python}
	if err := os.RemoveAll(rt.PythonPath); err != nil {
		return rt, err
	}
	if err := WriteTo(rt.PythonPath); err != nil {
		return rt, err
	}
	if err := os.MkdirAll(rt.BinDir, 0o755); err != nil {
		return rt, err
	}
	for _, name := range []string{"python3", "python"} {
		link := filepath.Join(rt.BinDir, name)
		os.Remove(link)
		if err := os.Symlink(python, link); err != nil {
			return rt, err
		}
	}
	return rt, nil
}

// DefaultPython is /usr/bin/python3 when it exists (Debian's, which sees
// packages such as python3-torch), else python3 from PATH.
func DefaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p
	}
	return "python3"
}
