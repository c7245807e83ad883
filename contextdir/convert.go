package contextdir

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
)

// Packer writes a gzipped tar of entries added one by one, refusing on the
// way what Check would refuse, so that what it packs is accepted.
type Packer struct {
	zw *gzip.Writer
	tw *tar.Writer
	t  *tree
}

// NewPacker returns a Packer writing to w.
func NewPacker(w io.Writer) *Packer {
	zw := gzip.NewWriter(w)
	return &Packer{zw: zw, tw: tar.NewWriter(zw), t: newTree()}
}

// Add adds the entry h describes, with the h.Size bytes of body for a file.
func (p *Packer) Add(h *tar.Header, body io.Reader) error {
	e, skip, err := p.t.add(h)
	if err != nil || skip {
		return err
	}
	out := &tar.Header{Typeflag: e.Type, Name: e.Name, Linkname: e.Link, Mode: e.Mode, Size: e.Size, ModTime: h.ModTime, Format: tar.FormatPAX}
	if e.Type == tar.TypeDir {
		out.Name += "/"
	}
	if err := p.tw.WriteHeader(out); err != nil {
		return err
	}
	if e.Type != tar.TypeReg {
		return nil
	}
	if n, err := io.CopyN(p.tw, bodyReader{body}, e.Size); err != nil {
		var be *bodyError
		if errors.As(err, &be) || n < e.Size {
			return invalid("%q: cannot read it: %v", h.Name, err)
		}
		return err
	}
	return nil
}

// Close checks where the links lead and ends the archive.
func (p *Packer) Close() error {
	if err := p.t.finish(); err != nil {
		return err
	}
	if err := p.tw.Close(); err != nil {
		return err
	}
	return p.zw.Close()
}

// FromZip repacks the zip archive a as a gzipped tar written to w, by the
// rules of Check: its files and directories (zip links are refused), each
// name with "\" read as "/".
func FromZip(w io.Writer, a Archive) error {
	if err := countZipEntries(a); err != nil {
		return err
	}
	zr, err := zip.NewReader(a, a.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // the rules judge names
		return invalid("not a readable zip archive: %v", err)
	}
	p := NewPacker(w)
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, `\`, "/")
		if len(name) > 1 && name[1] == ':' {
			return invalid("%q: paths must stay inside the context directory (it names a drive)", f.Name)
		}
		mode := f.Mode()
		h := &tar.Header{Name: name, Mode: int64(mode.Perm()), ModTime: f.Modified}
		switch {
		case mode.IsDir():
			h.Typeflag = tar.TypeDir
			err = p.Add(h, nil)
		case mode.IsRegular():
			if f.UncompressedSize64 > MaxUnpackedBytes {
				return tooLarge("unpacks to more than %d MiB", MaxUnpackedBytes>>20)
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(f.UncompressedSize64)
			err = addZipFile(p, h, f)
		default:
			return invalid("%q: only files and directories may be uploaded in a zip", f.Name)
		}
		if err != nil {
			return err
		}
	}
	return p.Close()
}

func addZipFile(p *Packer, h *tar.Header, f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return invalid("%q: cannot read it: %v", f.Name, err)
	}
	defer rc.Close()
	return p.Add(h, rc)
}

// zipDirectorySignature starts each entry of a zip's central directory.
var zipDirectorySignature = []byte("PK\x01\x02")

// countZipEntries refuses a zip that may hold more than MaxEntries entries,
// before archive/zip reads them all into memory: it counts the signatures
// that start the central directory's records, which bounds how many the
// reader can find.
func countZipEntries(a Archive) error {
	const chunk = 1 << 20
	keep := len(zipDirectorySignature) - 1 // too short to hold a whole one
	buf := make([]byte, keep+chunk)
	n, tail := 0, 0
	for off := int64(0); off < a.Size(); off += chunk {
		m, err := a.ReadAt(buf[tail:tail+chunk], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		end := tail + m
		if n += bytes.Count(buf[:end], zipDirectorySignature); n > MaxEntries {
			return tooLarge("holds more than %d entries", MaxEntries)
		}
		// The last bytes go first in the next round, so that a signature
		// across the boundary is found.
		tail = min(end, keep)
		copy(buf, buf[end-tail:end])
	}
	return nil
}

// Normalize turns an uploaded archive into the gzipped tar contexts are
// kept as: a gzip stays as it is; a zip is repacked (FromZip) and a plain
// tar compressed into a new File in dir, and f is closed. Anything else is
// invalid; an empty f is an empty context.
func Normalize(dir string, f *File) (*File, error) {
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	head = head[:n]
	var convert func(io.Writer) error
	switch {
	case n == 0, bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return f, nil
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		convert = func(w io.Writer) error { return FromZip(w, f) }
	case n > 262 && bytes.HasPrefix(head[257:], []byte("ustar")):
		convert = func(w io.Writer) error {
			zw := gzip.NewWriter(w)
			if _, err := io.Copy(zw, Reader(f)); err != nil {
				return err
			}
			return zw.Close()
		}
	default:
		return nil, invalid("expected a .tar.gz, .tgz, .tar or .zip archive")
	}
	out, err := Create(dir)
	if err != nil {
		return nil, err
	}
	if err := convert(out); err != nil {
		out.Close()
		return nil, err
	}
	f.Close()
	return out, nil
}
