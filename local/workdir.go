package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/resolute-ml/resolute"
)

// maxLinkHops bounds symlink resolution when checking an archive's links.
const maxLinkHops = 40

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

// fillWorkDir unpacks the context archive, then writes files. Every write
// goes through an os.Root, so nothing can land outside dir even through a
// symlink; the name checks reject bad input early and clearly.
func fillWorkDir(dir string, tarGz []byte, files map[string][]byte, limit int64) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open work dir: %w", err)
	}
	defer root.Close()
	if len(tarGz) > 0 {
		if err := unpack(root, tarGz, limit); err != nil {
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

// unpack extracts a gzipped tar into root: regular files, directories, and
// links that stay inside root. Other entry types (devices, FIFOs) are rejected.
func unpack(root *os.Root, tarGz []byte, limit int64) error {
	gz, err := gzip.NewReader(bytes.NewReader(tarGz))
	if err != nil {
		return resolute.Errorf(resolute.EInvalid, "context archive is not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	var total int64
	var links []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return resolute.Errorf(resolute.EInvalid, "context archive is not a valid tar: %v", err)
		}
		if h.Typeflag == tar.TypeDir && path.Clean(h.Name) == "." {
			continue // "./"
		}
		if err := checkRelPath(h.Name); err != nil {
			return resolute.Errorf(resolute.EInvalid, "context archive: %s", resolute.ErrorMessage(err))
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeDir {
			if err := root.MkdirAll(path.Dir(name), 0o700); err != nil {
				return writeErr(name, err)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(name, fs.FileMode(h.Mode)&0o777|0o700)
		case tar.TypeReg:
			if total+h.Size > limit {
				return resolute.Errorf(resolute.ETooLarge, "context archive unpacks to more than %d bytes", limit)
			}
			var n int64
			n, err = writeEntry(root, name, fs.FileMode(h.Mode)&0o777|0o600, tr)
			total += n
		case tar.TypeSymlink:
			if path.IsAbs(h.Linkname) || !isLocal(path.Join(path.Dir(name), h.Linkname)) {
				return resolute.Errorf(resolute.EInvalid, "context archive: symlink %q points outside the work dir", h.Name)
			}
			err = root.Symlink(h.Linkname, name)
			links = append(links, name)
		case tar.TypeLink:
			if err := checkRelPath(h.Linkname); err != nil {
				return resolute.Errorf(resolute.EInvalid, "context archive: hard link %q points outside the work dir", h.Name)
			}
			err = root.Link(path.Clean(h.Linkname), name)
		default:
			return resolute.Errorf(resolute.EInvalid, "context archive: %q has an unsupported type", h.Name)
		}
		if err != nil {
			return writeErr(name, err)
		}
	}
	// Links are checked once all exist: a later entry can change where an
	// earlier link leads (e.g. "l" -> "d/../x", then "d" -> ".").
	for _, l := range links {
		if !resolvesInside(root, l) {
			return resolute.Errorf(resolute.EInvalid, "context archive: symlink %q leads outside the work dir", l)
		}
	}
	return nil
}

func writeEntry(root *os.Root, name string, mode fs.FileMode, r io.Reader) (int64, error) {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// isLocal reports whether a cleaned slash path stays inside its root.
func isLocal(p string) bool {
	p = path.Clean(p)
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p)
}

// resolvesInside follows the path name inside root the way the kernel
// would, and reports whether it never leaves root. Missing parts are taken
// as plain names.
func resolvesInside(root *os.Root, name string) bool {
	var real []string // the resolved directory so far, free of symlinks
	rest := strings.Split(name, "/")
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(real) == 0 {
				return false
			}
			real = real[:len(real)-1]
			continue
		}
		p := path.Join(append(real, part)...)
		fi, err := root.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			real = append(real, part)
			continue
		}
		if hops++; hops > maxLinkHops {
			return false
		}
		target, err := root.Readlink(p)
		if err != nil || path.IsAbs(target) {
			return false
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return true
}
