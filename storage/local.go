package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"syscall"
)

// A local checkpoint's directory belongs to the task's Unix user, and the
// master reads it as root: the user can swap any entry for a link (to
// /etc/shadow, to the master's allocation state and its tokens) between the
// moment the master looks at it and the moment it opens it, e.g. with
// renameat2(RENAME_EXCHANGE) in a loop. So Local never opens a path string:
// it goes through an os.Root opened on the storage directory, which refuses
// anything that leads out of it, and it takes an entry only when what it
// opened is the very directory or regular file the listing saw (the same
// inode as an Lstat before the open). Links, FIFOs, sockets and entries
// swapped while read are left out (Object.Skipped), and so is a file with
// other names that is not the checkpoint owner's: a hard link the user made
// to a file they cannot read (where fs.protected_hardlinks is off).

// Local is shared_fs or directory storage: a directory on this machine
// holding each checkpoint in a directory named by its UUID.
type Local struct {
	Dir string
}

// String names the directory.
func (l *Local) String() string { return fmt.Sprintf("checkpoint directory %s", l.Dir) }

// Walk streams the directories and regular files of the checkpoint
// directory prefix, sorted, each read through the storage's os.Root.
func (l *Local) Walk(ctx context.Context, prefix string, fn WalkFunc) error {
	p, err := checkPrefix(prefix)
	if err != nil {
		return err
	}
	storage, err := os.OpenRoot(l.Dir)
	if err != nil {
		return fmt.Errorf("%s: %w", l, ErrNotFound)
	}
	defer storage.Close()
	dir, names, info, err := openDir(storage, filepath.FromSlash(p))
	if err != nil {
		return fmt.Errorf("%s: checkpoint %s: %w", l, p, ErrNotFound)
	}
	defer dir.Close()
	w := &localWalk{ctx: ctx, fn: fn, owner: info.Sys().(*syscall.Stat_t).Uid}
	return w.entries(dir, "", names)
}

// List is Walk without reading: the regular files under prefix.
func (l *Local) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	err := l.Walk(ctx, prefix, func(o Object, _ io.Reader) error {
		if !o.Dir && !o.Skipped {
			out = append(out, o)
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return out, err
}

// Open opens one regular file of the storage through its os.Root.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := checkPrefix(key)
	if err != nil {
		return nil, err
	}
	storage, err := os.OpenRoot(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l, ErrNotFound)
	}
	defer storage.Close()
	f, err := storage.OpenFile(filepath.FromSlash(k), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", l, k, ErrNotFound)
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %s is not a regular file: %w", l, k, ErrNotFound)
	}
	return f, nil
}

// Delete removes the checkpoint directory prefix and what it holds, through
// the storage's os.Root.
func (l *Local) Delete(ctx context.Context, prefix string) error {
	p, err := checkPrefix(prefix)
	if err != nil {
		return err
	}
	storage, err := os.OpenRoot(l.Dir)
	if err != nil {
		return fmt.Errorf("%s: %w", l, err)
	}
	defer storage.Close()
	if err := storage.RemoveAll(filepath.FromSlash(p)); err != nil {
		return fmt.Errorf("%s: deleting %s: %w", l, p, err)
	}
	return nil
}

// openDir opens directory name of parent as a root of its own and lists it,
// sorted; fs.ErrNotExist when name is not a directory, or not the one an
// Lstat saw a moment before (swapped in between).
func openDir(parent *os.Root, name string) (*os.Root, []string, fs.FileInfo, error) {
	seen, err := parent.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !seen.IsDir() {
		return nil, nil, nil, fs.ErrNotExist
	} else if err != nil {
		return nil, nil, nil, err
	}
	dir, err := parent.OpenRoot(name)
	if err != nil {
		return nil, nil, nil, fs.ErrNotExist // gone, or now a link out of parent
	}
	names, info, err := list(dir)
	if err == nil && !os.SameFile(seen, info) {
		err = fs.ErrNotExist
	}
	if err != nil {
		dir.Close()
		return nil, nil, nil, err
	}
	return dir, names, info, nil
}

// list reads what dir holds, sorted, and what it is.
func list(dir *os.Root) ([]string, fs.FileInfo, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, info, err
}

// localWalk is one Walk of a checkpoint directory.
type localWalk struct {
	ctx   context.Context
	fn    WalkFunc
	owner uint32 // the uid that owns the checkpoint's directory
}

func (w *localWalk) skip(p string) error { return w.fn(Object{Path: p, Skipped: true}, nil) }

// entries walks the named entries of dir, which is prefix in the walk.
func (w *localWalk) entries(dir *os.Root, prefix string, names []string) error {
	for _, name := range names {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		walked := path.Join(prefix, name)
		seen, err := dir.Lstat(name)
		switch {
		case err != nil:
			err = w.skip(walked) // gone meanwhile
		case seen.IsDir():
			err = w.dir(dir, name, walked)
		case seen.Mode().IsRegular():
			err = w.file(dir, name, walked, seen)
		default:
			err = w.skip(walked)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dir walks subdirectory name of parent and what it holds.
func (w *localWalk) dir(parent *os.Root, name, walked string) error {
	sub, names, info, err := openDir(parent, name)
	if err != nil {
		return w.skip(walked)
	}
	defer sub.Close()
	if err := w.fn(Object{Path: walked, Dir: true, ModTime: info.ModTime(), Info: info}, nil); err != nil {
		return err
	}
	return w.entries(sub, walked, names)
}

// file hands fn regular file name of dir, which an Lstat saw as seen.
// O_NONBLOCK: a FIFO swapped in would otherwise hold the open forever.
func (w *localWalk) file(dir *os.Root, name, walked string, seen fs.FileInfo) error {
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return w.skip(walked)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !os.SameFile(seen, info) {
		return w.skip(walked)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Nlink > 1 && st.Uid != w.owner {
		return w.skip(walked)
	}
	// The size is the one opened; a file that shrinks meanwhile cuts the
	// reader short, one that grows is cut at that size.
	return w.fn(Object{Path: walked, Size: info.Size(), ModTime: info.ModTime(), Info: info}, io.LimitReader(f, info.Size()))
}
