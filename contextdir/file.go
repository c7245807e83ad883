package contextdir

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/resolute-ml/resolute"
)

// Archive is an archive that can be read from anywhere, any number of
// times: a File, or a *bytes.Reader.
type Archive interface {
	io.ReaderAt
	Size() int64
}

// Reader reads a from its start.
func Reader(a Archive) io.Reader { return io.NewSectionReader(a, 0, a.Size()) }

// File is a temporary file in a directory the caller names, for an upload
// on its way to the database. Its name is removed as soon as it is made, so
// the file goes when it is closed, or when the process dies, whatever
// happens in between.
type File struct {
	f    *os.File
	size int64
}

// Create makes an empty File in dir.
func Create(dir string) (*File, error) {
	f, err := os.CreateTemp(dir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("temporary file for an upload: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("temporary file for an upload: %w", err)
	}
	return &File{f: f}, nil
}

// Spool copies r into a new File in dir, as Fill does.
func Spool(dir string, r io.Reader, limit int64) (*File, error) {
	f, err := Create(dir)
	if err != nil {
		return nil, err
	}
	if err := f.Fill(r, limit); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Fill replaces what f holds with what r reads, so that one File can take
// many small uploads in turn. More than limit bytes is a too_large error; an
// error reading r is returned as it is.
func (f *File) Fill(r io.Reader, limit int64) error {
	if err := f.f.Truncate(0); err != nil {
		return fmt.Errorf("temporary file for an upload: %w", err)
	}
	f.size = 0
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = resolute.Errorf(resolute.ETooLarge, "context: the archive is larger than %d MiB", limit>>20)
	}
	return err
}

// Write appends p.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.WriteAt(p, f.size)
	f.size += int64(n)
	return n, err
}

// ReadAt reads from off, as io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	if rest := f.size - off; int64(len(p)) > rest {
		n, err := f.f.ReadAt(p[:rest], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return f.f.ReadAt(p, off)
}

// Size is how many bytes were written; nil has none.
func (f *File) Size() int64 {
	if f == nil {
		return 0
	}
	return f.size
}

// Close closes the file, which frees its space. It may be called more than
// once, and on nil.
func (f *File) Close() error {
	if f == nil || f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}
