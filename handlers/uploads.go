package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// How uploads of context directories are taken: each request's context is
// streamed to a temporary file (contextdir.File, under Config.UploadDir),
// checked and stored from there by the service, and never held in memory
// whole. At most Config.MaxConcurrentUploads requests hold an upload at
// once, from the first byte of their context until they are answered;
// further ones wait their turn, their contexts unread (the client's sending
// stalls), and the wait is logged. Waiting rather than a 503 suits the CLI
// and the browser form alike, which would otherwise have to send the whole
// context again; but a wait has an end (Config.UploadWaitTimeout, then a
// 503 with Retry-After), and so has a slot held by a client that stops
// sending (Config.UploadIdleTimeout without a byte, then a 408), so that a
// few slow clients cannot keep everyone else waiting for ever.

// DefaultMaxConcurrentUploads is Config.MaxConcurrentUploads's default.
const DefaultMaxConcurrentUploads = 4

// DefaultUploadIdleTimeout is Config.UploadIdleTimeout's default: long
// enough for a slow link's pauses, short beside the upload itself.
const DefaultUploadIdleTimeout = time.Minute

// DefaultUploadWaitTimeout is Config.UploadWaitTimeout's default.
const DefaultUploadWaitTimeout = 2 * time.Minute

// uploadRetryAfter is the Retry-After of an upload refused after its wait.
const uploadRetryAfter = 30 * time.Second

// maxUploadBytes bounds a request that carries a context directory: the
// 96 MiB archive, its base64 growth in JSON, and the other fields.
const maxUploadBytes = contextdir.MaxArchiveBytes*4/3 + 8<<20

// uploadSlots lets at most cap(slots) requests upload at once.
type uploadSlots struct {
	dir    string
	slots  chan struct{}
	idle   time.Duration // the longest a body may send nothing
	wait   time.Duration // the longest a request waits for a slot
	logger *slog.Logger
}

func newUploadSlots(cfg Config, logger *slog.Logger) *uploadSlots {
	s := &uploadSlots{dir: cfg.UploadDir, idle: cfg.UploadIdleTimeout, wait: cfg.UploadWaitTimeout, logger: logger}
	if s.dir == "" {
		s.dir = os.TempDir()
	}
	n := cfg.MaxConcurrentUploads
	if n <= 0 {
		n = DefaultMaxConcurrentUploads
	}
	s.slots = make(chan struct{}, n)
	if s.idle <= 0 {
		s.idle = DefaultUploadIdleTimeout
	}
	if s.wait <= 0 {
		s.wait = DefaultUploadWaitTimeout
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s
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

// enter waits for a slot, as long as ctx (the request) lives and at most
// the slots' wait.
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
	n := cap(u.slots.slots)
	u.slots.logger.Info("an upload waits for its turn", "max_concurrent_uploads", n)
	timer := time.NewTimer(u.slots.wait)
	defer timer.Stop()
	select {
	case u.slots.slots <- struct{}{}:
		u.held = true
		return nil
	case <-ctx.Done():
		return resolute.Errorf(resolute.EUnavailable, "the upload was given up while it waited for its turn: %v", context.Cause(ctx))
	case <-timer.C:
		u.slots.logger.Warn("an upload was refused after waiting for its turn", "max_concurrent_uploads", n, "waited", u.slots.wait)
		running := fmt.Sprintf("%d uploads are", n)
		if n == 1 {
			running = "1 upload is"
		}
		return retryLater{resolute.Errorf(resolute.EUnavailable, "%s running, as many as the master takes at once, and this one waited %s for its turn: send it again later",
			running, u.slots.wait), uploadRetryAfter}
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

// idleBody wraps an upload's body so that each read must bring a byte within
// the slots' idle time: the deadline is set on the connection before each
// read and lifted after it, so that the request's waits between reads (for
// its turn, for the database) have none.
func (s *uploadSlots) idleBody(w http.ResponseWriter, body io.ReadCloser) io.ReadCloser {
	return &idleBody{ReadCloser: body, w: w, rc: http.NewResponseController(w), idle: s.idle}
}

type idleBody struct {
	io.ReadCloser
	w       http.ResponseWriter
	rc      *http.ResponseController
	idle    time.Duration
	stalled error
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.stalled != nil {
		return 0, b.stalled
	}
	if err := b.rc.SetReadDeadline(time.Now().Add(b.idle)); err != nil {
		return b.ReadCloser.Read(p) // a connection without deadlines
	}
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The deadline stays past, so that the server's own reading of the
		// rest ends at once too, and the connection closes after the answer.
		b.w.Header().Set("Connection", "close")
		b.stalled = resolute.Errorf(resolute.ETimeout, "the upload stalled: nothing came for %s; send it again", b.idle)
		return n, b.stalled
	}
	b.rc.SetReadDeadline(time.Time{})
	return n, err
}
