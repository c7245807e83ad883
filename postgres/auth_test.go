package postgres

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestOnlyTheMastersPasswordOpensTheDatabase(t *testing.T) {
	srv := start(t, tempDir(t))
	ctx := context.Background()
	if conn, err := pgx.Connect(ctx, srv.URL("postgres")); err != nil {
		t.Fatalf("the master's URL: %v", err)
	} else {
		conn.Close(ctx)
	}
	socket := url.Values{"host": {srv.SocketDir()}, "sslmode": {"disable"}}.Encode()
	for name, user := range map[string]*url.Userinfo{
		"no password":           url.User("postgres"),
		"a wrong password":      url.UserPassword("postgres", "guess"),
		"another database user": url.UserPassword("nobody", "guess"),
	} {
		u := (&url.URL{Scheme: "postgres", User: user, Path: "/postgres", RawQuery: socket}).String()
		conn, err := pgx.Connect(ctx, u)
		if err == nil {
			conn.Close(ctx)
			t.Errorf("%s: connected", name)
			continue
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "28P01" && pgErr.Code != "28000") {
			t.Errorf("%s: %v, want an authentication failure (28P01 or 28000)", name, err)
		}
	}

	for _, d := range []string{filepath.Dir(srv.DataDir()), srv.DataDir(), srv.SocketDir()} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", d, fi.Mode().Perm(), err)
		}
	}
	fi, err := os.Stat(srv.passwordFile())
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("password file: %v %v, want the master's with mode 0600", fi.Mode(), err)
	}
	if strings.HasPrefix(srv.passwordFile(), filepath.Dir(srv.DataDir())+"/") {
		t.Errorf("the password is kept in the postgres user's directory")
	}
}

// TestAnotherUnixUserCannotConnectEvenWithThePassword runs psql as nobody,
// as a task of another user would, with the password in hand: the socket's
// directory does not let it in.
func TestAnotherUnixUserCannotConnectEvenWithThePassword(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("needs psql")
	}
	srv := start(t, tempDir(t))
	for _, args := range [][]string{
		{psql, "-h", srv.SocketDir(), "-U", "postgres", "-d", "postgres", "-c", "SELECT 1"},
		{"/bin/cat", srv.passwordFile()},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"PGPASSWORD=" + srv.password, "PGCONNECT_TIMEOUT=5"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s as nobody succeeded: %s", filepath.Base(args[0]), out)
		} else if !strings.Contains(string(out), "ermission denied") {
			t.Errorf("%s as nobody: %v: %s, want permission denied", filepath.Base(args[0]), err, out)
		}
	}
}

// TestATrustDirectoryIsUpgradedInPlace starts on a directory made as
// Resolute made them before (initdb --auth=trust) with a table in it: the
// table is kept, and the directory now asks for the password.
func TestATrustDirectoryIsUpgradedInPlace(t *testing.T) {
	bin, err := BinDir()
	if err != nil {
		t.Skip(err)
	}
	dir := tempDir(t)
	cred, err := credential()
	if err != nil {
		t.Fatal(err)
	}
	old := &Server{dir: dir, dataDir: filepath.Join(dir, "data"), bin: bin, cred: cred, logger: discard()}
	if err := old.prepare(); err != nil {
		t.Fatal(err)
	}
	runAs(t, cred, "", filepath.Join(bin, "initdb"), "-D", old.dataDir, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions")
	runAs(t, cred, "CREATE TABLE kept (v int);\nINSERT INTO kept VALUES (7);\n",
		filepath.Join(bin, "postgres"), "--single", "-D", old.dataDir, "postgres")

	srv := start(t, dir)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 7 {
		t.Fatalf("the row made before the upgrade: v=%d err=%v", v, err)
	}
	noPassword := (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: url.Values{"host": {srv.SocketDir()}, "sslmode": {"disable"}}.Encode()}).String()
	if c, err := pgx.Connect(ctx, noPassword); err == nil {
		c.Close(ctx)
		t.Fatal("the upgraded directory still lets anyone in without a password")
	}
	hba, _ := os.ReadFile(filepath.Join(srv.DataDir(), "pg_hba.conf"))
	if string(hba) != hbaConf {
		t.Errorf("pg_hba.conf:\n%s", hba)
	}
}

func TestADirectoryOfAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	if _, err := BinDir(); err != nil {
		t.Skip(err)
	}
	dir := tempDir(t)
	// As another user would leave one in /tmp for a long data_dir's socket.
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chown(run, 65534, 65534)
	_, err := Start(context.Background(), dir, discard())
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("err = %v, want a refusal naming the owner", err)
	}
}

// runAs runs a command as cred's user with stdin, failing t on an error.
func runAs(t *testing.T, cred *syscall.Credential, stdin string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERROR:") {
		t.Fatalf("%s: %v\n%s", filepath.Base(name), err, out)
	}
}
