package client

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxContextBytes is the most a context directory may hold (Determined's
// 96 MiB); the master refuses larger uploads.
const MaxContextBytes = 96 << 20

// IgnoreFile is the name of the file that lists what of a context
// directory is not uploaded.
const IgnoreFile = ".detignore"

// alwaysSkipped are directories never uploaded: they are large, and of no
// use to a trial.
var alwaysSkipped = map[string]bool{".git": true, "__pycache__": true}

// ContextFile is one entry of a context archive.
type ContextFile struct {
	Name   string // slash-separated name in the archive
	Source string // the file on disk
	Dir    bool
	Mode   fs.FileMode
	Size   int64
}

// Context is a context directory scanned for upload: what will be packed,
// after .detignore.
type Context struct {
	Files []ContextFile
	// Size is the total bytes of its files.
	Size int64
	// Skipped names the links to directories, which are not uploaded.
	Skipped []string
}

// NumFiles is how many files (not directories) the context holds.
func (c *Context) NumFiles() int {
	n := 0
	for _, f := range c.Files {
		if !f.Dir {
			n++
		}
	}
	return n
}

// ScanContext lists what of dir (may be "" for none) and of the include
// paths would be uploaded. dir's .detignore leaves entries out, and so
// does that of an included directory for its own entries; .git and
// __pycache__ are always left out. Each include goes at the top of the
// archive under its base name. Links to files are uploaded as the files
// they point to.
func ScanContext(dir string, includes []string) (*Context, error) {
	c := &Context{}
	seen := map[string]string{}
	if dir != "" {
		if err := c.scan(dir, "", seen); err != nil {
			return nil, err
		}
	}
	for _, inc := range includes {
		fi, err := os.Stat(inc)
		if err != nil {
			return nil, fmt.Errorf("include: %w", err)
		}
		base := filepath.Base(filepath.Clean(inc))
		if base == "." || base == ".." || base == string(filepath.Separator) {
			return nil, fmt.Errorf("include %q: name a file or directory by a path that ends in its name", inc)
		}
		if prev, ok := seen[base]; ok {
			return nil, fmt.Errorf("include %q: %q is already in the context (from %s)", inc, base, prev)
		}
		if !fi.IsDir() {
			c.add(ContextFile{Name: base, Source: inc, Mode: fi.Mode().Perm(), Size: fi.Size()}, seen)
			continue
		}
		if err := c.scan(inc, base, seen); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Context) add(f ContextFile, seen map[string]string) {
	c.Files = append(c.Files, f)
	c.Size += f.Size
	if !strings.Contains(f.Name, "/") {
		seen[f.Name] = f.Source
	}
}

// scan walks root, putting its entries under prefix ("" for the top).
func (c *Context) scan(root, prefix string, seen map[string]string) error {
	ig := &Ignore{}
	if text, err := os.ReadFile(filepath.Join(root, IgnoreFile)); err == nil {
		ig = ParseIgnore(string(text))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("context directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("context directory %s is not a directory", root)
	}
	if prefix != "" {
		c.add(ContextFile{Name: prefix, Source: root, Dir: true, Mode: fi.Mode().Perm()}, seen)
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() && alwaysSkipped[d.Name()] {
			return filepath.SkipDir
		}
		info, err := os.Stat(p) // follows links
		if err != nil {
			return fmt.Errorf("context: %w", err)
		}
		isLink := d.Type()&fs.ModeSymlink != 0
		if ig.Match(rel, info.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := path.Join(prefix, rel)
		switch {
		case isLink && info.IsDir():
			c.Skipped = append(c.Skipped, name)
		case info.IsDir():
			c.add(ContextFile{Name: name, Source: p, Dir: true, Mode: info.Mode().Perm()}, seen)
		case info.Mode().IsRegular():
			c.add(ContextFile{Name: name, Source: p, Mode: info.Mode().Perm(), Size: info.Size()}, seen)
		}
		return nil
	})
}

// WriteTarGz writes the context as a gzipped tar archive to w.
func (c *Context) WriteTarGz(w io.Writer) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, f := range c.Files {
		if err := writeEntry(tw, f); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeEntry(tw *tar.Writer, f ContextFile) error {
	h := &tar.Header{Name: f.Name, Mode: int64(f.Mode), Typeflag: tar.TypeReg, Size: f.Size, Format: tar.FormatPAX}
	if f.Dir {
		h.Name += "/"
		h.Typeflag = tar.TypeDir
		h.Size = 0
		return tw.WriteHeader(h)
	}
	src, err := os.Open(f.Source)
	if err != nil {
		return fmt.Errorf("context: %w", err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err == nil {
		h.ModTime = fi.ModTime()
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	// A file that grew since the scan is cut at the scanned size, and one
	// that shrank is an error: the header already promised Size bytes.
	n, err := io.Copy(tw, io.LimitReader(src, f.Size))
	if err != nil {
		return fmt.Errorf("context: %s: %w", f.Source, err)
	}
	if n != f.Size {
		return fmt.Errorf("context: %s changed while it was being packed", f.Source)
	}
	return nil
}
