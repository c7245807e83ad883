package postgres

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The server's directory is the postgres user's, and the master, as root,
// reads and writes files in it: whoever gets that user's rights (any
// database superuser, through COPY ... TO PROGRAM) could put there a link to
// /etc/shadow for root to write through, chown or append the server's log
// to, or a FIFO for it to hang on. So the master opens what is in that
// directory only through an os.Root on it (no link leads out of it),
// creates with O_EXCL, changes owners and modes on descriptors, and reads
// and writes only regular files with one name.

// openIn opens name, slash-separated and relative to the server's
// directory, through an os.Root on that directory; it must be a regular
// file with one name.
func (s *Server) openIn(name string, flag int, perm os.FileMode) (*os.File, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return plainFile(root.OpenFile(name, flag|syscall.O_NONBLOCK, perm))
}

// readIn reads what openIn opens, at most its last maxRead bytes.
func (s *Server) readIn(name string) ([]byte, error) {
	f, err := s.openIn(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRead {
		if _, err := f.Seek(-maxRead, io.SeekEnd); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, maxRead))
}

// maxRead bounds what readIn reads: the tail of a log, a lock file.
const maxRead = 64 << 10

// plainFile passes on f when it is a regular file with one name (no hard
// link to a file elsewhere), else closes it and fails.
func plainFile(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink != 1) {
		err = fmt.Errorf("%s is not a regular file with one name", f.Name())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeOwned replaces file name (relative to the server's directory) with
// data, owned by the server's user and private to it: a new file (a stale
// one unlinked first, never followed), given away on its descriptor, then
// renamed into place.
func (s *Server) writeOwned(name string, data []byte) error {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tmp := name + ".resolute"
	if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && s.cred != nil {
		err = f.Chown(int(s.cred.Uid), int(s.cred.Gid))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// ownDir makes the directory f, which it closes, the server user's with
// mode 0700. One that is not a directory, or that belongs to anybody else
// (made by another user to read the socket's traffic or stand in for it),
// is refused.
func (s *Server) ownDir(name string, f *os.File) error {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory; remove it", name)
	}
	owner := fi.Sys().(*syscall.Stat_t).Uid
	if owner != uint32(os.Geteuid()) && (s.cred == nil || owner != s.cred.Uid) {
		return fmt.Errorf("%s belongs to uid %d, not to the master or the postgres user; remove it", name, owner)
	}
	if s.cred != nil {
		if err := f.Chown(int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("give %s to the postgres user: %w", name, err)
		}
	}
	if err := f.Chmod(0o700); err != nil {
		return fmt.Errorf("make %s private: %w", name, err)
	}
	return nil
}
