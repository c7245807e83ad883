package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint tells people how to get PostgreSQL when it is missing.
const InstallHint = "PostgreSQL is not installed: install it with `apt-get install postgresql` " +
	"(Debian/Ubuntu), or set db.host in master.yaml to use an existing server"

// Server is a running private PostgreSQL server. Run keeps it running;
// Stop stops it.
type Server struct {
	dir      string // ours: holds data/, run/ (the socket) and server.log
	dataDir  string
	sockDir  string
	tempSock bool // sockDir is a directory of its own in /tmp, removed by Stop
	bin      string
	cred     *syscall.Credential // the postgres user's when we are root, else nil
	password string              // the superuser's, from passwordFile
	logger   *slog.Logger

	mu           sync.Mutex
	proc         *process  // the postmaster now, or the one that last exited
	stopping     bool      // Stop was called: start nothing more
	downSince    time.Time // when it went down; zero while it runs
	downWhy      string    // how it went down
	failedStarts int       // how many starts failed since
}

// process is one run of the postmaster.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited
	err  error         // how it exited, once done is closed
}

// Start initializes dir (when it holds no cluster yet), makes sure only the
// holder of <dir>.password can connect, and starts a server on a unix socket
// in it (or, when dir's path is too long for a socket's, in a new private
// directory in /tmp). It returns once the server accepts connections. A
// server of an earlier run still shutting down in dir is waited for (at
// most a minute). dir's parent must be the caller's alone: the password is
// kept there.
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
	s := &Server{dir: dir, dataDir: filepath.Join(dir, "data"), bin: bin, cred: cred, logger: logger}
	if err := s.start(ctx); err != nil {
		s.removeSocketDir()
		return nil, err
	}
	return s, nil
}

// start is Start once s is made: directories, an earlier server, initdb,
// the password, the postmaster.
func (s *Server) start(ctx context.Context) error {
	if err := s.prepare(); err != nil {
		return err
	}
	if err := s.waitForEarlierServer(ctx, earlierServerWait); err != nil {
		return err
	}
	_, err := os.Stat(filepath.Join(s.dataDir, "PG_VERSION"))
	fresh := errors.Is(err, os.ErrNotExist)
	if fresh {
		s.logger.Info("initializing embedded database", "dir", s.dataDir)
		if err := s.initdb(ctx); err != nil {
			return err
		}
	}
	if err := s.secure(ctx, fresh); err != nil {
		return err
	}
	return s.launch(ctx)
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
// the superuser with its password. It is a secret: never log it.
func (s *Server) URL(name string) string {
	q := url.Values{"host": {s.sockDir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.UserPassword("postgres", s.password), Path: "/" + name, RawQuery: q.Encode()}).String()
}

// SocketDir is the directory of the server's unix socket.
func (s *Server) SocketDir() string { return s.sockDir }

// DataDir is PostgreSQL's data directory.
func (s *Server) DataDir() string { return s.dataDir }

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
// and waits for it to exit; Run starts it no more.
func (s *Server) Stop() error {
	s.mu.Lock()
	s.stopping = true
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	defer s.removeSocketDir()
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("embedded database did not stop within 30s; killed")
	}
}

// removeSocketDir removes the socket's directory when it is one of its own
// in /tmp, made by this Server (the server removes its socket on exit).
// os.RemoveAll unlinks a link put in its place, never follows it.
func (s *Server) removeSocketDir() {
	if s.tempSock {
		os.RemoveAll(s.sockDir)
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

// prepare creates the server's directories, private to the server's user
// (mode 0700): the data directory, the socket's and their parent. The
// parent, dir, is made in the master's directory, where nobody else can put
// anything in its place; the others are made in dir, which is the postgres
// user's, through an os.Root on it.
func (s *Server) prepare() error {
	// Parents we make must let the postgres user pass through.
	if err := os.MkdirAll(filepath.Dir(s.dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(s.dir), err)
	}
	if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", s.dir, err)
	}
	f, err := os.OpenFile(s.dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("%s is not a directory (a link?); remove it: %w", s.dir, err)
	}
	if err := s.ownDir(s.dir, f); err != nil {
		return err
	}
	names := []string{"data"}
	if s.sockDir = filepath.Join(s.dir, "run"); len(s.sockDir)+len("/.s.PGSQL.5432") < 100 {
		names = append(names, "run")
	} else if err := s.makeTempSocketDir(); err != nil {
		return err
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range names {
		if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", filepath.Join(s.dir, name), err)
		}
		if fi, err := root.Lstat(name); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is not a directory (a link?); remove it", filepath.Join(s.dir, name))
		}
		f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		if err := s.ownDir(filepath.Join(s.dir, name), f); err != nil {
			return err
		}
	}
	if s.cred != nil {
		// The postgres user must be able to reach its directories.
		for p := filepath.Dir(s.dir); p != "/"; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("the postgres user cannot enter %s (mode %v): choose a data_dir outside it, or `chmod o+x %s`", p, fi.Mode().Perm(), p)
			}
		}
	}
	return nil
}

// makeTempSocketDir makes the socket's directory when dir's path is too
// long for a socket's (the kernel takes 107 bytes): a new one in /tmp with
// a name nobody can guess, so that nobody can make it first to stand in for
// the server or keep it from starting; it lasts as long as the Server (the
// master connects by the URL it is given, and a server of an earlier run is
// found by its postmaster.pid, not by its socket).
func (s *Server) makeTempSocketDir() error {
	d, err := os.MkdirTemp("", "resolute-pg-")
	if err != nil {
		return fmt.Errorf("create the socket's directory: %w", err)
	}
	s.sockDir, s.tempSock = d, true
	f, err := os.OpenFile(d, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	return s.ownDir(d, f)
}

// initdb makes a new cluster that nobody can connect to yet: secure sets
// the password and the rule that lets the master in.
func (s *Server) initdb(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"), "-D", s.dataDir, "-U", "postgres",
		"--auth=reject", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastLines(string(out), 5))
	}
	return nil
}

// launch starts the postmaster and waits until it accepts the master.
func (s *Server) launch(ctx context.Context) error {
	p, err := s.startProcess()
	if err != nil {
		return err
	}
	if err := s.waitReady(ctx, p); err != nil {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGQUIT) // not ready: no clean shutdown to wait for
			<-p.done
		}
		return err
	}
	return nil
}

// errStopping is launch's answer once Stop was called.
var errStopping = errors.New("embedded database is stopping")

func (s *Server) startProcess() (*process, error) {
	logFile, err := s.openLog()
	if err != nil {
		return nil, fmt.Errorf("open embedded database log: %w", err)
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir,
		"-c", "listen_addresses=", "-c", "unix_socket_directories="+s.sockDir, "-c", "unix_socket_permissions=0700",
		"-c", "hba_file="+filepath.Join(s.dataDir, "pg_hba.conf"), "-c", "password_encryption=scram-sha-256",
		"-c", "max_connections=200", "-c", "fsync=on")
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: if the master dies without stopping us, the server stops too
	// and the next start waits for it, then reuses the directory.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	p := &process{cmd: cmd, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		logFile.Close()
		return nil, errStopping
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start embedded database: %w", err)
	}
	s.proc = p
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (s *Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("embedded database exited: %v: %s", p.err, s.logTail(5))
		case <-ctx.Done():
			return fmt.Errorf("embedded database not ready: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openLog opens the server's log, server.log in its directory, to append
// to. Anything else in its place (a link the postgres user made, to have
// root append the server's output to a file of its choosing) is removed,
// not followed.
func (s *Server) openLog() (*os.File, error) {
	const name = "server.log"
	f, err := s.openIn(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		return f, nil
	}
	root, rerr := os.OpenRoot(s.dir)
	if rerr != nil {
		return nil, err
	}
	defer root.Close()
	if fi, lerr := root.Lstat(name); lerr != nil || fi.IsDir() {
		return nil, err
	}
	s.logger.Warn("embedded database: its log was not a regular file; making a new one", "log", filepath.Join(s.dir, name), "err", err)
	if err := root.Remove(name); err != nil {
		return nil, err
	}
	return s.openIn(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
}

// logTail is the last n lines of the server's log.
func (s *Server) logTail(n int) string {
	log, _ := s.readIn("server.log")
	return lastLines(string(log), n)
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
