package contextdir

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// Check reads a gzipped tar from r and returns nil when it keeps every rule
// (see the package doc), else an invalid or too_large error whose message
// starts with "context: " and names the entry. An empty r is an empty
// context. An error of r itself is returned as it is.
func Check(r io.Reader) error {
	return walk(r, func(e Entry, body io.Reader) error {
		if e.Type != tar.TypeReg {
			return nil
		}
		// Read as Unpack reads, so that a broken file fails both alike.
		n, err := io.Copy(io.Discard, bodyReader{body})
		if err == nil && n != e.Size {
			err = &bodyError{io.ErrUnexpectedEOF}
		}
		return writeErr(e.Name, err)
	})
}

// Unpack unpacks the gzipped tar of r into root by the rules of Check: an
// archive Check accepts unpacks, short of the disk failing; one it refuses
// is refused with the same error, with what was unpacked before it left in
// root. Directories get their mode with owner rwx, files theirs with owner
// rw; root should be empty.
func Unpack(root *os.Root, r io.Reader) error {
	return walk(r, func(e Entry, body io.Reader) error {
		return write(root, e, body)
	})
}

// walk reads the gzipped tar of r, checks each entry against the rules and
// hands the accepted ones to fn in archive order, with a file's contents;
// once all are read, it checks where the links lead.
func walk(r io.Reader, fn func(Entry, io.Reader) error) error {
	br := bufio.NewReader(sourceReader{r})
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return nil // nothing uploaded: an empty context
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return readErr(err, "not a gzipped tar archive")
	}
	defer zr.Close()
	tr := tar.NewReader(&streamLimit{r: zr, left: maxTarBytes})
	t := newTree()
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return readErr(err, "not a readable tar archive")
		}
		e, skip, err := t.add(h)
		if err != nil {
			return err
		} else if skip {
			continue
		}
		if err := fn(e, tr); err != nil {
			return err
		}
	}
	return t.finish()
}

// readErr reports a broken archive; an error of the reader under it (the
// request body failing, the database) stays what it is.
func readErr(err error, what string) error {
	var re *sourceError
	if errors.As(err, &re) {
		return re.err
	}
	return invalid("%s: %v", what, err)
}

// maxTarBytes bounds the tar stream inside the gzip: the files, and room for
// every entry's headers and padding. Without it a small archive could make
// the check read gigabytes of headers that describe nothing.
const maxTarBytes = MaxUnpackedBytes + MaxEntries*4096

// streamLimit fails the read past left bytes with a too_large error.
type streamLimit struct {
	r    io.Reader
	left int64
}

func (l *streamLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, &sourceError{tooLarge("its tar stream is longer than %d MiB", maxTarBytes>>20)}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// sourceError marks an error of the archive's source, as opposed to its
// contents.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// sourceReader wraps the errors of r as sourceErrors.
type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &sourceError{err}
	}
	return n, err
}

// write makes one accepted entry under root. The rules leave nothing to
// replace and no link on the way, so each step makes something new.
func write(root *os.Root, e Entry, body io.Reader) error {
	if e.Type == tar.TypeDir {
		return writeErr(e.Name, root.MkdirAll(e.Name, fs.FileMode(e.Mode)|0o700))
	}
	if dir := path.Dir(e.Name); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return writeErr(e.Name, err)
		}
	}
	switch e.Type {
	case tar.TypeReg:
		f, err := root.OpenFile(e.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(e.Mode)|0o600)
		if err != nil {
			return writeErr(e.Name, err)
		}
		n, err := io.Copy(f, bodyReader{body})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && n != e.Size {
			err = &bodyError{io.ErrUnexpectedEOF}
		}
		return writeErr(e.Name, err)
	case tar.TypeSymlink:
		return writeErr(e.Name, root.Symlink(e.Link, e.Name))
	case tar.TypeLink:
		return writeErr(e.Name, root.Link(e.Link, e.Name))
	}
	return fmt.Errorf("contextdir: unexpected entry type %q", e.Type)
}

// bodyError marks an error of reading a file's contents from the archive.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// bodyReader wraps the errors of reading r as bodyErrors.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = &bodyError{err}
	}
	return n, err
}

// writeErr reports a failure to unpack name: the source's own error as it
// is, a broken archive (its data ends early, a bad checksum) as invalid,
// anything else as the disk's.
func writeErr(name string, err error) error {
	var source *sourceError
	var body *bodyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &source):
		return source.err
	case errors.As(err, &body):
		return invalid("%q: the archive breaks inside it: %v", name, body.err)
	}
	return fmt.Errorf("unpack %q: %w", name, err)
}
