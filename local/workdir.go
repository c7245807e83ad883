package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// checkRelPath accepts a relative slash-separated path with no ".." part.
func checkRelPath(name string) error {
	switch {
	case name == "" || strings.Contains(name, "\x00"):
		return resolute.Errorf(resolute.EInvalid, "file name %q is not valid", name)
	case strings.HasPrefix(name, "/"):
		return resolute.Errorf(resolute.EInvalid, "file name %q must be relative", name)
	case path.Clean(name) == ".":
		return resolute.Errorf(resolute.EInvalid, "file name %q names the work dir itself", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return resolute.Errorf(resolute.EInvalid, "file name %q must not contain ..", name)
		}
	}
	return nil
}

// fillWorkDir unpacks the context archive, by the rules its upload was
// checked with (package contextdir), then writes files. Every write goes
// through an os.Root, so nothing can land outside dir even through a
// symlink; the name checks reject bad input early and clearly.
func fillWorkDir(ctx context.Context, dir string, archive func(context.Context) io.Reader, files map[string][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open work dir: %w", err)
	}
	defer root.Close()
	if archive != nil {
		if err := contextdir.Unpack(root, archive(ctx)); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		name = path.Clean(name)
		if err := root.MkdirAll(path.Dir(name), 0o700); err != nil {
			return writeErr(name, err)
		}
		if err := root.WriteFile(name, files[name], 0o700); err != nil {
			return writeErr(name, err)
		}
	}
	return nil
}

func writeErr(name string, err error) error {
	if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "escapes") {
		return resolute.Errorf(resolute.EInvalid, "cannot write %q: %v", name, err)
	}
	return fmt.Errorf("write %q: %w", name, err)
}
