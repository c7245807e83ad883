package handlers

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
)

// A checkpoint's directory belongs to the task's Unix user, and the master
// reads it as root: the user can swap any entry for a link (to /etc/shadow,
// to the master's allocation state and its tokens) between the moment the
// master looks at it and the moment it opens it, e.g. with
// renameat2(RENAME_EXCHANGE) in a loop. So checkpointTar never opens a path
// string: it goes through an os.Root opened on the storage directory, which
// refuses anything that leads out of it, and it takes an entry only when
// what it opened is the very directory or regular file the listing saw (the
// same inode as an Lstat before the open). Links, FIFOs, sockets and entries
// swapped while read are left out, and so is a file with other names that
// is not the checkpoint owner's: a hard link the user made to a file they
// cannot read (where fs.protected_hardlinks is off).

// checkpointTar writes a checkpoint's directory to a tar archive: its
// directories and regular files. What it leaves out (links, special files,
// entries that changed under it, others' hard links) it lists in skipped.
type checkpointTar struct {
	tw      *tar.Writer
	owner   uint32 // the uid that owns the checkpoint's directory
	skipped []string
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

// entries writes the named entries of dir, which is prefix in the archive.
func (t *checkpointTar) entries(dir *os.Root, prefix string, names []string) error {
	for _, name := range names {
		archived := path.Join(prefix, name)
		seen, err := dir.Lstat(name)
		switch {
		case err != nil:
			t.skipped = append(t.skipped, archived) // gone meanwhile
		case seen.IsDir():
			if err := t.dir(dir, name, archived); err != nil {
				return err
			}
		case seen.Mode().IsRegular():
			if err := t.file(dir, name, archived, seen); err != nil {
				return err
			}
		default:
			t.skipped = append(t.skipped, archived)
		}
	}
	return nil
}

// dir writes subdirectory name of parent and what it holds.
func (t *checkpointTar) dir(parent *os.Root, name, archived string) error {
	sub, names, info, err := openDir(parent, name)
	if err != nil {
		t.skipped = append(t.skipped, archived)
		return nil
	}
	defer sub.Close()
	h, err := tar.FileInfoHeader(info, "")
	if err != nil {
		return err
	}
	h.Name = archived + "/"
	if err := t.tw.WriteHeader(h); err != nil {
		return err
	}
	return t.entries(sub, archived, names)
}

// file writes regular file name of dir, which an Lstat saw as seen.
// O_NONBLOCK: a FIFO swapped in would otherwise hold the open forever.
func (t *checkpointTar) file(dir *os.Root, name, archived string, seen fs.FileInfo) error {
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.skipped = append(t.skipped, archived)
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !os.SameFile(seen, info) {
		t.skipped = append(t.skipped, archived)
		return nil
	}
	if st := info.Sys().(*syscall.Stat_t); st.Nlink > 1 && st.Uid != t.owner {
		t.skipped = append(t.skipped, archived)
		return nil
	}
	h, err := tar.FileInfoHeader(info, "")
	if err != nil {
		return err
	}
	h.Name = archived
	if err := t.tw.WriteHeader(h); err != nil {
		return err
	}
	// The size in the header is the one opened; a file that shrinks
	// meanwhile cuts the archive short, one that grows is cut at that size.
	if _, err := io.CopyN(t.tw, f, info.Size()); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New(archived + " shrank while it was read")
		}
		return err
	}
	return nil
}
