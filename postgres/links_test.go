package postgres

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// needRoot skips tests of what the master does as root in the postgres
// user's directory.
func needRoot(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the master runs the server as the postgres user only then")
	}
	if _, err := BinDir(); err != nil {
		t.Skip(err)
	}
	cred, err := credential()
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// rootOnly is a file only root can read or write, outside the server's
// directory, as /etc/shadow.
func rootOnly(t *testing.T, content string) string {
	t.Helper()
	d, err := os.MkdirTemp("", "resolute-root-only-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	p := filepath.Join(d, "shadow")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// unchanged fails t when root-only file p is not as rootOnly made it.
func unchanged(t *testing.T, p, content string) {
	t.Helper()
	b, err := os.ReadFile(p)
	fi, serr := os.Stat(p)
	if err != nil || serr != nil {
		t.Fatalf("%s: %v %v", p, err, serr)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if string(b) != content || st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the root-only file %s is now %q, uid %d gid %d mode %v", p, b, st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// plant makes a link of the postgres user at p, to target.
func plant(t *testing.T, cred *syscall.Credential, target, p string) {
	t.Helper()
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

// TestTheMasterFollowsNoLinkThePostgresUserPlants stops a server, then, as
// anyone with the postgres user's rights could (a database superuser
// through COPY ... TO PROGRAM), puts in its directory links to root-only
// files where the master writes pg_hba.conf's new copy and the server's
// log: the next start writes, chowns and appends to none of them, and the
// server runs.
func TestTheMasterFollowsNoLinkThePostgresUserPlants(t *testing.T) {
	cred := needRoot(t)
	dir := tempDir(t)
	srv := start(t, dir)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	hba, log := rootOnly(t, "root:secret-hash:1\n"), rootOnly(t, "root's own lines\n")
	plant(t, cred, hba, filepath.Join(dir, "data", "pg_hba.conf.resolute"))
	plant(t, cred, log, filepath.Join(dir, "server.log"))

	srv = start(t, dir)
	execSQL(t, srv.URL("postgres"), "SELECT 1")
	unchanged(t, hba, "root:secret-hash:1\n")
	unchanged(t, log, "root's own lines\n")
	if b, err := os.ReadFile(filepath.Join(dir, "data", "pg_hba.conf")); err != nil || string(b) != hbaConf {
		t.Errorf("pg_hba.conf: %q %v", b, err)
	}
}

// TestAPasswordKeptInTheServersDirectoryIsMovedOut starts on a directory
// laid out as before, with the password in <dir>/password, which the
// postgres user could replace by a link: it is moved beside the directory,
// where only the master writes, and still opens the database.
func TestAPasswordKeptInTheServersDirectoryIsMovedOut(t *testing.T) {
	dir := tempDir(t)
	srv := start(t, dir)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	pw := srv.password
	if err := os.Rename(srv.passwordFile(), filepath.Join(dir, "password")); err != nil {
		t.Fatal(err)
	}

	srv = start(t, dir)
	if srv.password != pw {
		t.Errorf("the password changed in the move")
	}
	if b, err := os.ReadFile(dir + ".password"); err != nil || strings.TrimSpace(string(b)) != pw {
		t.Errorf("%s.password: %v", dir, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "password")); err == nil {
		t.Errorf("the password is still in the server's directory")
	}
	execSQL(t, srv.URL("postgres"), "SELECT 1")
}

// TestALinkInPlaceOfAnOldPasswordIsNotRead puts a link to a root-only file
// where an earlier Resolute kept the password: the master makes a new
// password, and the file's content never becomes one.
func TestALinkInPlaceOfAnOldPasswordIsNotRead(t *testing.T) {
	cred := needRoot(t)
	dir := tempDir(t)
	srv := start(t, dir)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	shadow := rootOnly(t, "root:secret-hash:1\n")
	if err := os.Remove(srv.passwordFile()); err != nil {
		t.Fatal(err)
	}
	plant(t, cred, shadow, filepath.Join(dir, "password"))

	srv = start(t, dir)
	if strings.Contains(srv.password, "secret-hash") {
		t.Fatalf("the master took the root-only file's content for its password")
	}
	unchanged(t, shadow, "root:secret-hash:1\n")
	execSQL(t, srv.URL("postgres"), "SELECT 1")
}

// oldSocketDir is where an earlier Resolute put the socket of a directory
// whose path is too long for a socket's: a name anyone could work out.
func oldSocketDir(dir string) string {
	h := uint32(2166136261)
	for i := 0; i < len(dir); i++ {
		h = (h ^ uint32(dir[i])) * 16777619
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("resolute-pg-%x", h))
}

// TestALongDirectorysSocketIsInAPrivateDirectoryNobodyTakesFirst starts a
// server whose directory's path is too long for a socket's, after another
// user made the directory where an earlier Resolute put the socket then:
// the server starts, with its socket in a new directory of its own (mode
// 0700), another at every start, removed when it stops.
func TestALongDirectorysSocketIsInAPrivateDirectoryNobodyTakesFirst(t *testing.T) {
	cred := needRoot(t)
	dir := filepath.Join(filepath.Dir(tempDir(t)), strings.Repeat("a", 40), strings.Repeat("b", 40), "pg")
	taken := oldSocketDir(dir)
	if err := os.Mkdir(taken, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(taken) })
	if err := os.Chown(taken, 65534, 65534); err != nil {
		t.Fatal(err)
	}

	var seen []string
	for range 2 {
		srv := start(t, dir)
		d := srv.SocketDir()
		execSQL(t, srv.URL("postgres"), "SELECT 1")
		fi, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || st.Uid != cred.Uid {
			t.Errorf("socket dir %s: %v uid %d, want a directory of uid %d, mode 0700", d, fi.Mode(), st.Uid, cred.Uid)
		}
		if d == taken || strings.HasPrefix(d, dir) || len(d)+len("/.s.PGSQL.5432") >= 100 {
			t.Errorf("socket dir %s", d)
		}
		seen = append(seen, d)
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("the socket's directory %s outlives the server", d)
		}
	}
	if seen[0] == seen[1] {
		t.Errorf("two starts used the same socket directory %s", seen[0])
	}
}
