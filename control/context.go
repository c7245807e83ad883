package control

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
)

// CheckContext checks an uploaded context directory (tar.gz): no absolute
// paths, no "..", no links that leave the directory, no device files, and
// at most maxUnpacked bytes once unpacked. An empty upload is an empty
// context.
func CheckContext(tgz []byte, maxUnpacked int64) error {
	if len(tgz) == 0 {
		return nil
	}
	bad := func(format string, args ...any) error {
		return resolute.Errorf(resolute.EInvalid, "context: "+format, args...)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return bad("not a gzipped tar archive: %v", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return bad("broken archive: %v", err)
		}
		name := h.Name
		if !safeRelative(name) {
			return bad("%q: paths must stay inside the context directory", name)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeSymlink, tar.TypeLink:
			target := h.Linkname
			if h.Typeflag == tar.TypeSymlink && !path.IsAbs(target) {
				target = path.Join(path.Dir(name), target)
			}
			if !safeRelative(target) {
				return bad("%q links to %q, outside the context directory", name, h.Linkname)
			}
		default:
			return bad("%q: only files, directories and links may be uploaded", name)
		}
		total += h.Size
		if total > maxUnpacked {
			return resolute.Errorf(resolute.ETooLarge, "context: unpacks to more than %d bytes", maxUnpacked)
		}
	}
}

// safeRelative reports whether p is a relative path that stays inside its
// directory.
func safeRelative(p string) bool {
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, `\`) {
		return false
	}
	clean := path.Clean(p)
	return clean != ".." && !strings.HasPrefix(clean, "../")
}

// newToken makes an allocation's session token and the hash kept of it.
func newToken() (string, []byte) { return auth.NewToken() }
