package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// How uploads of context directories are taken: each request's context is
// streamed to a temporary file (contextdir.File, under Config.UploadDir),
// checked and stored from there by the service, and never held in memory
// whole. At most Config.MaxConcurrentUploads requests hold an upload at
// once, from the first byte of their context until they are answered;
// further ones wait their turn while they live, their contexts unread (the
// client's sending stalls), and the wait is logged. Waiting rather than a
// 503 suits the CLI and the browser form alike, which would otherwise have
// to send the whole context again.

// DefaultMaxConcurrentUploads is Config.MaxConcurrentUploads's default.
const DefaultMaxConcurrentUploads = 4

// maxUploadBytes bounds a request that carries a context directory: the
// 96 MiB archive, its base64 growth in JSON, and the other fields.
const maxUploadBytes = contextdir.MaxArchiveBytes*4/3 + 8<<20

// uploadSlots lets at most cap(slots) requests upload at once.
type uploadSlots struct {
	dir    string
	slots  chan struct{}
	logger *slog.Logger
}

func newUploadSlots(dir string, n int, logger *slog.Logger) *uploadSlots {
	if dir == "" {
		dir = os.TempDir()
	}
	if n <= 0 {
		n = DefaultMaxConcurrentUploads
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &uploadSlots{dir: dir, slots: make(chan struct{}, n), logger: logger}
}

// upload is what one request uploads: the temporary files it made, and
// its slot among the uploads the master takes at once.
type upload struct {
	slots *uploadSlots
	held  bool
	files []*contextdir.File
}

// newUpload starts a request's upload; Close ends it.
func (s *Server) newUpload() *upload { return &upload{slots: s.uploads} }

// enter waits for a slot, as long as ctx (the request) lives.
func (u *upload) enter(ctx context.Context) error {
	if u.held {
		return nil
	}
	select {
	case u.slots.slots <- struct{}{}:
		u.held = true
		return nil
	default:
	}
	u.slots.logger.Info("an upload waits for its turn", "max_concurrent_uploads", cap(u.slots.slots))
	select {
	case u.slots.slots <- struct{}{}:
		u.held = true
		return nil
	case <-ctx.Done():
		return resolute.Errorf(resolute.EUnavailable, "the upload was given up while it waited for its turn: %v", context.Cause(ctx))
	}
}

// spool streams r, at most limit bytes, to a temporary file once the
// request holds a slot.
func (u *upload) spool(ctx context.Context, r io.Reader, limit int64) (*contextdir.File, error) {
	if err := u.enter(ctx); err != nil {
		return nil, err
	}
	f, err := u.create()
	if err == nil {
		err = fill(f, r, limit)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// fill replaces what f holds with r, at most limit bytes (File.Fill), with
// the errors of reading the request's body made resolute ones.
func fill(f *contextdir.File, r io.Reader, limit int64) error {
	err := f.Fill(r, limit)
	var tooBig *http.MaxBytesError
	var known *resolute.Error
	switch {
	case errors.As(err, &tooBig):
		return uploadTooLarge(tooBig)
	case errors.As(err, &known):
		return known
	case err != nil:
		return resolute.Errorf(resolute.EInvalid, "reading the upload: %v", err)
	}
	return nil
}

// create makes an empty temporary file for what the request's upload is
// turned into.
func (u *upload) create() (*contextdir.File, error) {
	f, err := contextdir.Create(u.slots.dir)
	if err == nil {
		u.files = append(u.files, f)
	}
	return f, err
}

// normalize turns an uploaded archive into a tar.gz (contextdir.Normalize).
func (u *upload) normalize(f *contextdir.File) (*contextdir.File, error) {
	if f == nil {
		return nil, nil
	}
	out, err := contextdir.Normalize(u.slots.dir, f)
	if err == nil && out != f {
		u.files = append(u.files, out)
	}
	return out, err
}

// Close removes the request's temporary files and gives its slot back.
func (u *upload) Close() {
	for _, f := range u.files {
		f.Close()
	}
	u.files = nil
	if u.held {
		<-u.slots.slots
		u.held = false
	}
}

// archive is f as a service takes it: nil when nothing was uploaded.
func archive(f *contextdir.File) contextdir.Archive {
	if f == nil {
		return nil
	}
	return f
}

func uploadTooLarge(e *http.MaxBytesError) error {
	return resolute.Errorf(resolute.ETooLarge, "the upload is larger than %d bytes; the context directory may be at most 96 MiB", e.Limit)
}
