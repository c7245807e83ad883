package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/resolute-ml/resolute"
)

// Tasks run as the Unix users their specs name (LaunchSpec.RunAs), never as
// the master's: another user's task must not read their tokens (in
// /proc/<pid>/environ, which only a process's own user can read), their
// work directory or the master's files. That takes a master that runs as
// root; one that does not runs every task as itself, and says so.

// taskCred is the identity an allocation's processes run as. A nil
// *taskCred means the master's own (the master is not root).
type taskCred struct {
	UID    int      `json:"uid"`
	GID    int      `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"` // supplementary groups: a linked user's, from /etc/group
	User   string   `json:"user"`
	Home   string   `json:"home"`
	// DefaultIDs says the uid is its owner's default one (task_uid_base +
	// user id), not a link: no person logs in as it, so once none of the
	// manager's allocations runs as it, what still does is a stray
	// (strays.go). Absent, as in state files of older masters, it is
	// treated as a link.
	DefaultIDs bool `json:"defaultIds,omitempty"`
}

// sysCred is the credential exec gives the processes; its empty Groups
// drops the master's supplementary groups.
func (c *taskCred) sysCred() *syscall.Credential {
	if c == nil {
		return nil
	}
	groups := c.Groups
	if groups == nil {
		groups = []uint32{}
	}
	return &syscall.Credential{Uid: uint32(c.UID), Gid: uint32(c.GID), Groups: groups}
}

// credFor works out what a spec's processes run as, and makes its home
// directory. It returns a line for the task's log when the master cannot
// honour an administrator's link.
func (m *Manager) credFor(spec AllocationSpec) (*taskCred, string, error) {
	u := spec.RunAs
	if !m.switchUsers {
		if u.Linked {
			return nil, fmt.Sprintf("this task runs as the master's user (uid %d), not as %s (uid %d) that its owner is linked to: "+
				"the master does not run as root, so it cannot switch users", os.Geteuid(), u.User, u.UID), nil
		}
		return nil, "", nil
	}
	if u.UID <= 0 || u.GID <= 0 || u.UID > resolute.MaxTaskUID || u.GID > resolute.MaxTaskUID {
		return nil, "", resolute.Errorf(resolute.EInvalid, "launch %s: tasks never run as root: a task must run as a Unix user of its own (got uid %d, gid %d)",
			spec.AllocationID, u.UID, u.GID)
	}
	c := &taskCred{UID: u.UID, GID: u.GID, User: u.User, DefaultIDs: !u.Linked}
	if u.Linked {
		c.Groups, c.Home = accountOf(u.UID)
	}
	if c.Home == "" {
		c.Home = filepath.Join(m.opts.HomeRoot, strconv.Itoa(u.UID))
		if err := m.makeHome(c); err != nil {
			return nil, "", fmt.Errorf("launch %s: home directory of uid %d: %w", spec.AllocationID, u.UID, err)
		}
	}
	return c, "", nil
}

// accountOf returns the supplementary groups and home directory of the
// account of uid in the system's user database, when it has one: a linked
// user is often a person with an account, whose tasks should see their own
// files and groups. The home counts only when it is a directory uid owns.
func accountOf(uid int) (groups []uint32, home string) {
	acct, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return nil, ""
	}
	if ids, err := acct.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				groups = append(groups, uint32(g))
			}
		}
	}
	if fi, err := os.Stat(acct.HomeDir); err == nil && fi.IsDir() && acct.HomeDir != "/" {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			home = acct.HomeDir
		}
	}
	return groups, home
}

// makeHome makes a task user's home under HomeRoot: theirs, mode 0700.
// Only root can add entries to HomeRoot, so what is there is ours to fix;
// still, the home is changed through a descriptor opened without following
// a link, never by its name, as everywhere the master touches what a task's
// user owns.
func (m *Manager) makeHome(c *taskCred) error {
	if err := os.Mkdir(c.Home, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	f, err := os.OpenFile(c.Home, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("%s is not a directory: %w", c.Home, err)
	}
	defer f.Close()
	if err := f.Chown(c.UID, c.GID); err != nil {
		return err
	}
	return f.Chmod(0o700)
}

// giveTree hands a filled work directory to the task's user: every entry,
// deepest first, and dir itself last. Until then dir is root's and mode
// 0700 (freshWorkDir made it), so no process of that user can swap a
// directory of the tree for a link while it is walked; and the walk and the
// chowns go through an os.Root on dir, which never leads out of it, and
// change links themselves, not what they name.
func giveTree(dir string, c *taskCred) error {
	if c == nil {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var names []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	if err := root.Chmod(".", 0o700); err != nil {
		return err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if err := root.Lchown(names[i], c.UID, c.GID); err != nil {
			return err
		}
	}
	return nil
}

// identityEnv are the variables that say who the task runs as.
func (c *taskCred) identityEnv() map[string]string {
	if c == nil {
		return nil
	}
	return map[string]string{"HOME": c.Home, "USER": c.User, "LOGNAME": c.User}
}

// prepareTaskDirs makes the directories every task uses reachable by task
// users, and checks that they are: the work and home roots (0711: enter,
// not list), the shared directories (created 01777, as /tmp; existing ones
// must let others write), and the harness.
func (m *Manager) prepareTaskDirs() error {
	var reach []string
	for _, d := range []string{m.opts.WorkRoot, m.opts.HomeRoot} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o711); err != nil {
			return fmt.Errorf("local: create %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o711); err != nil { // ours: an older master made it 0700
			return fmt.Errorf("local: %w", err)
		}
		reach = append(reach, d)
	}
	for _, d := range m.opts.SharedDirs {
		if err := makeShared(d); err != nil {
			return fmt.Errorf("local: create %s: %w", d, err)
		}
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("local: %w", err)
		}
		if fi.Mode().Perm()&0o003 != 0o003 {
			return fmt.Errorf("tasks run as their own Unix users and write to %s, which others cannot write to (mode %v): "+
				"`chmod 1777 %s` (sticky, as /tmp: each user deletes only their own files)", d, fi.Mode().Perm(), d)
		}
		reach = append(reach, d)
	}
	for _, d := range []string{m.opts.HarnessDir, m.opts.BinDir} {
		if d != "" {
			reach = append(reach, d)
		}
	}
	for _, d := range reach {
		if err := checkReachable(d); err != nil {
			return err
		}
	}
	return nil
}

// makeShared makes d, when nothing is there, shared as /tmp is (mode
// 01777). Its parent may be a directory tasks write to (/tmp itself), where
// a task's user can put a link to /etc at d between a look and a chmod: so
// d is made with Mkdir, which fails on anything in its way, and its mode is
// set through a descriptor of what Mkdir made, opened without following a
// link and checked to be the master's. What is already there is left as it
// is, for prepareTaskDirs to check.
func makeShared(d string) error {
	if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(d, 0o755); errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return err
	}
	f, err := os.OpenFile(d, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != uint32(os.Geteuid()) {
		return fmt.Errorf("it was replaced by a directory of uid %d while it was made", uid)
	}
	return f.Chmod(os.ModeSticky | 0o777)
}

// checkReachable fails when a user other than the owner cannot pass
// through dir or one of its parents (they lack o+x); parts that do not
// exist yet are not checked.
func checkReachable(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case os.IsNotExist(err) && p != "/":
			continue // made later, by its first task: its parents count
		case err != nil:
			return fmt.Errorf("local: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("tasks run as their own Unix users, who cannot enter %s (mode %v) to reach %s: "+
				"choose a data_dir outside it, or `chmod o+x %s`", p, fi.Mode().Perm(), dir, p)
		}
		if p == "/" {
			return nil
		}
	}
}
