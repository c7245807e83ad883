package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint tells people how to get PostgreSQL when it is missing.
const InstallHint = "PostgreSQL is not installed: install it with `apt-get install postgresql` " +
	"(Debian/Ubuntu), or set db.host in master.yaml to use an existing server"

// Server is a running private PostgreSQL server.
type Server struct {
	dir     string // ours: holds data/, run/ (the socket) and server.log
	dataDir string
	sockDir string
	cmd     *exec.Cmd
	done    chan error
	logger  *slog.Logger
}

// Start initializes dir (when it holds no cluster yet) and starts a server on
// a unix socket in it. It returns once the server accepts connections.
func Start(ctx context.Context, dir string, logger *slog.Logger) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, dataDir: filepath.Join(dir, "data"), sockDir: socketDir(dir),
		logger: logger, done: make(chan error, 1)}
	if err := s.prepare(cred); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		logger.Info("initializing embedded database", "dir", s.dataDir)
		if err := s.initdb(ctx, bin, cred); err != nil {
			return nil, err
		}
	}
	if err := s.start(bin, cred); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// BinDir finds PostgreSQL's server binaries: `pg_config --bindir` when it
// points at a directory holding postgres, else the newest
// /usr/lib/postgresql/*/bin.
func BinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if isFile(filepath.Join(dir, "postgres")) && isFile(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if isFile(filepath.Join(dir, "postgres")) && isFile(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	return "", errors.New(InstallHint)
}

// URL returns the connection string for database name on this server, as
// the superuser.
func (s *Server) URL(name string) string {
	q := url.Values{"host": {s.sockDir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + name, RawQuery: q.Encode()}).String()
}

// EnsureDatabase creates the database name when it does not exist.
func (s *Server) EnsureDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}

// Stop shuts the server down ("fast" mode: open transactions are rolled back)
// and waits for it to exit.
func (s *Server) Stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		s.done <- err
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return errors.New("embedded database did not stop within 30s; killed")
	}
}

// credential says which user runs the server: nil for ourselves, the
// postgres user's ids when we are root (PostgreSQL refuses to run as root).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the embedded database must run as the postgres user, which does not exist: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// prepare creates the data and socket directories owned by the server's user.
func (s *Server) prepare(cred *syscall.Credential) error {
	// Parents we make must let the postgres user pass through.
	if err := os.MkdirAll(filepath.Dir(s.dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(s.dir), err)
	}
	for _, d := range []string{s.dir, s.dataDir, s.sockDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
		if cred != nil {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("give %s to the postgres user: %w", d, err)
			}
		}
	}
	if cred != nil {
		// The postgres user must be able to reach its directories.
		for p := filepath.Dir(s.dir); p != "/"; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("the postgres user cannot enter %s (mode %v): choose a data_dir outside it, or `chmod o+x %s`", p, fi.Mode().Perm(), p)
			}
		}
	}
	return nil
}

func (s *Server) initdb(ctx context.Context, bin string, cred *syscall.Credential) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", s.dataDir, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastLines(string(out), 5))
	}
	return nil
}

func (s *Server) start(bin string, cred *syscall.Credential) error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open embedded database log: %w", err)
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", s.dataDir,
		"-c", "listen_addresses=", "-c", "unix_socket_directories="+s.sockDir,
		"-c", "max_connections=200", "-c", "fsync=on")
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	// Pdeathsig: if the master dies without stopping us, the server stops too
	// and the next start reuses the directory.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start embedded database: %w", err)
	}
	go func() {
		err := s.cmd.Wait()
		logFile.Close()
		s.done <- err
	}()
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case exitErr := <-s.done:
			s.done <- exitErr
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("embedded database exited: %v: %s", exitErr, lastLines(string(log), 5))
		case <-ctx.Done():
			return fmt.Errorf("embedded database not ready: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// socketDir keeps the socket path under the kernel's 107-byte limit.
func socketDir(dir string) string {
	d := filepath.Join(dir, "run")
	if len(d)+len("/.s.PGSQL.5432") < 100 {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("resolute-pg-%x", hash(dir)))
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
