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
	"io/fs"
	"os"
	"path/filepath"
)

// Files is the Python package `determined`, rooted at "determined/".
//
//go:embed determined/*.py determined/*/*.py
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
