package client

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/resolute-ml/resolute"
)

// Checkpoint returns one checkpoint with the validation metrics of its
// step (GET /api/v1/checkpoints/{uuid}).
func (c *Client) Checkpoint(ctx context.Context, uuid string) (resolute.Checkpoint, error) {
	var out struct {
		Checkpoint resolute.Checkpoint `json:"checkpoint"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/checkpoints/"+url.PathEscape(uuid), nil, nil, &out)
	return out.Checkpoint, err
}

// DownloadCheckpoint writes a checkpoint's files into dir, creating it
// (GET /api/v1/checkpoints/{uuid}/download, a tar stream). Entries that
// would land outside dir are refused.
func (c *Client) DownloadCheckpoint(ctx context.Context, uuid, dir string) error {
	resp, err := c.send(ctx, c.stream, http.MethodGet, "/api/v1/checkpoints/"+url.PathEscape(uuid)+"/download", nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := Untar(resp.Body, dir); err != nil {
		return fmt.Errorf("checkpoint %s: %w", uuid, err)
	}
	return nil
}

// Untar unpacks a tar stream into dir, creating it. Only files and
// directories are written; an absolute name, a name with "..", or any other
// kind of entry (links, devices) is an error, so nothing is written outside
// dir.
func Untar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		name, ok := safeName(h.Name)
		if !ok {
			return fmt.Errorf("archive entry %q would be written outside %s", h.Name, dir)
		}
		if name == "." {
			continue
		}
		if err := noLinksUnder(dir, name); err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, h.FileInfo().Mode().Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("archive entry %q: only files and directories are unpacked", h.Name)
		}
	}
}

// safeName cleans a tar entry name and says whether it stays inside the
// directory it is unpacked into.
func safeName(name string) (string, bool) {
	name = strings.ReplaceAll(name, `\`, "/")
	if name == "" || path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return "", false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", false
		}
	}
	return path.Clean(name), true
}

// noLinksUnder refuses to write name when a directory on its way inside
// dir is a symbolic link that was there before, since it could lead out.
func noLinksUnder(dir, name string) error {
	p := dir
	parts := strings.Split(name, "/")
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("archive entry %q: %s is a symbolic link; not following it", name, p)
		}
	}
	return nil
}

func writeFile(target string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	// O_EXCL would refuse re-downloads; removing first means a symlink
	// left at target is replaced, not followed.
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DeleteCheckpoints deletes checkpoints and their files (DELETE
// /api/v1/checkpoints); the master's GC tasks delete the files and mark
// them deleted when done.
func (c *Client) DeleteCheckpoints(ctx context.Context, uuids []string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/checkpoints", nil, map[string]any{"checkpointUuids": uuids}, nil)
}
