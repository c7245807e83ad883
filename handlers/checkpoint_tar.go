package handlers

import (
	"archive/tar"
	"errors"
	"io"
	"net/http"

	"github.com/resolute-ml/resolute/storage"
)

// checkpointTar writes a checkpoint to a tar archive as storage walks it:
// a local directory's directories and regular files (storage.Local reads
// them safely, see its doc), or a bucket's objects, one stream at a time,
// never copied whole anywhere first. What the walk left out (links,
// special files, entries that changed under it, others' hard links) it
// lists in skipped.
type checkpointTar struct {
	w       http.ResponseWriter
	uuid    string
	tw      *tar.Writer
	skipped []string
}

// walk is the storage.WalkFunc that archives each entry; the response's
// headers go out with the first one, so a walk that fails before any can
// still answer with an error.
func (t *checkpointTar) walk(o storage.Object, content io.Reader) error {
	if o.Skipped {
		t.skipped = append(t.skipped, o.Path)
		return nil
	}
	t.start()
	h := &tar.Header{Typeflag: tar.TypeReg, Name: o.Path, Size: o.Size, Mode: 0o644, ModTime: o.ModTime, Format: tar.FormatPAX}
	if o.Dir {
		h = &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755, ModTime: o.ModTime, Format: tar.FormatPAX}
	}
	if o.Info != nil {
		var err error
		if h, err = tar.FileInfoHeader(o.Info, ""); err != nil {
			return err
		}
	}
	h.Name = o.Path
	if o.Dir {
		h.Name += "/"
	}
	if err := t.tw.WriteHeader(h); err != nil {
		return err
	}
	if o.Dir {
		return nil
	}
	// The header's size is the one listed; a file that shrinks meanwhile
	// cuts the archive short.
	if _, err := io.CopyN(t.tw, content, o.Size); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New(o.Path + " shrank while it was read")
		}
		return err
	}
	return nil
}

// start sends the response's headers and begins the archive, once.
func (t *checkpointTar) start() {
	if t.tw == nil {
		t.w.Header().Set("Content-Type", "application/x-tar")
		t.w.Header().Set("Content-Disposition", `attachment; filename="`+t.uuid+`.tar"`)
		t.tw = tar.NewWriter(t.w)
	}
}

// close ends the archive (an empty one when the checkpoint's directory
// holds nothing).
func (t *checkpointTar) close() error {
	t.start()
	return t.tw.Close()
}
