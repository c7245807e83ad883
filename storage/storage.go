package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// Object is one file of a checkpoint (or, on a local directory, one of its
// subdirectories).
type Object struct {
	// Path is the object's path below the prefix asked for, with slashes.
	Path    string
	Size    int64
	ModTime time.Time
	// Dir is a subdirectory (local storage only; buckets have none).
	Dir bool
	// Info is what a local directory's entry is, for an archive's header;
	// nil in buckets.
	Info fs.FileInfo
	// Skipped is an entry Walk left out: a link, a special file, one that
	// changed while it was read, or another user's hard link (local only).
	Skipped bool
}

// WalkFunc is called by Walk for each object in order, with its content
// (nil for directories and skipped entries), which it must read before it
// returns.
type WalkFunc func(o Object, content io.Reader) error

// Store is where an experiment's checkpoints are. Every prefix is a
// checkpoint's UUID (or a path inside one), relative to the storage's own
// base; "" or a path with ".." is refused.
type Store interface {
	// List returns the objects under prefix, sorted by path; an empty
	// list when there are none.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Open streams one object, prefix/path as List named it.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Walk streams every object under prefix in path order; ErrNotFound
	// when there is none.
	Walk(ctx context.Context, prefix string, fn WalkFunc) error
	// Delete removes every object under prefix; none there is no error.
	Delete(ctx context.Context, prefix string) error
	// String names the storage in messages: "s3 bucket \"b\"".
	String() string
}

// ErrNotFound is a checkpoint (prefix) or object that is not in storage.
var ErrNotFound = errors.New("not in storage")

// New returns the Store of a checkpoint_storage config. It makes no request:
// a missing bucket or a bad credential shows on first use.
func New(ctx context.Context, cs *expconf.CheckpointStorageConfig) (Store, error) {
	switch {
	case cs == nil:
		return nil, resolute.Errorf(resolute.EInvalid, "no checkpoint storage is configured")
	case cs.SharedFS != nil, cs.Directory != nil:
		dir, err := cs.LocalDir()
		if err != nil {
			return nil, err
		}
		return &Local{Dir: dir}, nil
	case cs.S3 != nil:
		return newS3(ctx, *cs.S3)
	case cs.GCS != nil:
		return newGCS(ctx, *cs.GCS)
	case cs.Azure != nil:
		return newAzure(*cs.Azure)
	}
	return nil, resolute.Errorf(resolute.EInvalid, "checkpoint storage of type %q is not supported", cs.Type)
}

// checkPrefix refuses an empty prefix (which would be the whole storage)
// and one that climbs out with "..".
func checkPrefix(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", resolute.Errorf(resolute.EInvalid, "storage: an empty prefix would name all checkpoints")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return "", resolute.Errorf(resolute.EInvalid, "storage: bad prefix %q", p)
		}
	}
	return p, nil
}

// keyOf joins a bucket's base prefix and a path under it.
func keyOf(base, p string) string {
	if base = strings.Trim(base, "/"); base == "" {
		return p
	}
	return path.Join(base, p)
}

// bucketError is an error of a bucket's service: it names the store, the
// operation and the cause in words, and keeps the SDK's error to unwrap.
type bucketError struct {
	store string
	op    string
	cause string
	err   error
}

func (e *bucketError) Error() string {
	return fmt.Sprintf("%s: %s: %s: %v", e.store, e.op, e.cause, e.err)
}

func (e *bucketError) Unwrap() error { return e.err }

// walkList is Walk for stores that list then open one object at a time.
func walkList(ctx context.Context, s Store, prefix string, fn WalkFunc) error {
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("%s: checkpoint %s: %w", s, prefix, ErrNotFound)
	}
	for _, o := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := s.Open(ctx, path.Join(prefix, o.Path))
		if err != nil {
			return err
		}
		err = fn(o, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
