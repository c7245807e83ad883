package control

import (
	"io"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/contextdir"
)

// checkContext checks an uploaded context directory (a gzipped tar) by the
// rules every launch unpacks it with (package contextdir), reading it from
// where the upload was spooled. Nil or empty is no context.
func checkContext(a contextdir.Archive) error {
	if a == nil || a.Size() == 0 {
		return nil
	}
	if a.Size() > contextdir.MaxArchiveBytes {
		return resolute.Errorf(resolute.ETooLarge, "context: the archive is %d bytes; the limit is %d (96 MiB)", a.Size(), contextdir.MaxArchiveBytes)
	}
	return contextdir.Check(contextdir.Reader(a))
}

// contextReader is the reader a store reads an upload from; nil for none.
func contextReader(a contextdir.Archive) io.Reader {
	if a == nil || a.Size() == 0 {
		return nil
	}
	return contextdir.Reader(a)
}

// newToken makes an allocation's session token and the hash kept of it.
func newToken() (string, []byte) { return auth.NewToken() }
