package postgres

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// hbaConf is the whole of pg_hba.conf: the superuser, with its password
// (SCRAM), on the unix socket; nothing else. Nobody but the master and the
// postgres user can reach the socket's directory anyway (mode 0700).
const hbaConf = `# Written by Resolute at every start: edits are undone.
# Only the master connects: as postgres, on the unix socket, with the
# password the master keeps beside this directory (SCRAM). There is no TCP
# listener.
local all postgres scram-sha-256
`

// scramIterations is PostgreSQL's default for SCRAM-SHA-256 verifiers.
const scramIterations = 4096

// secure makes the cluster accept only the master, before the server
// listens: the superuser's password is set to the one in the password file
// (made now when there is none) and pg_hba.conf allows nothing but it.
// Every start does it, so a directory made with --auth=trust by an earlier
// Resolute is upgraded in place, and a changed pg_hba.conf is put back.
func (s *Server) secure(ctx context.Context, fresh bool) error {
	pw, _, err := s.ensurePassword()
	if err != nil {
		return err
	}
	old, _ := s.readIn("data/pg_hba.conf")
	if !fresh && !bytes.Equal(old, []byte(hbaConf)) {
		s.logger.Info("embedded database: from now on only the master's password opens it (pg_hba.conf rewritten)",
			"password_file", s.passwordFile())
	}
	s.password = pw
	if err := s.setPassword(ctx, pw); err != nil {
		return err
	}
	return s.writeOwned("data/pg_hba.conf", []byte(hbaConf))
}

// passwordFile is where the superuser's password is kept: the master's
// file (mode 0600) beside the server's directory, in the master's own
// directory (data_dir), where the postgres user cannot put a link in its
// place or read it.
func (s *Server) passwordFile() string { return s.dir + ".password" }

// ensurePassword reads the password, or makes a random one when there is
// none yet; made says it did. A password an earlier Resolute kept inside
// the server's directory (<dir>/password) is moved out first.
func (s *Server) ensurePassword() (pw string, made bool, err error) {
	path := s.passwordFile()
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		s.movePassword(path)
	}
	f, err := plainFile(os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0))
	if err == nil {
		defer f.Close()
		b, err := io.ReadAll(f)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			// The file is the master's alone, whatever it was given.
			if err := f.Chmod(0o600); err != nil {
				return "", false, fmt.Errorf("embedded database password: %w", err)
			}
			return string(bytes.TrimSpace(b)), false, nil
		} else if err != nil {
			return "", false, fmt.Errorf("embedded database password: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("embedded database password: %w", err)
	}
	pw = rand.Text() + rand.Text()
	if err := writePassword(path, pw); err != nil {
		return "", false, fmt.Errorf("embedded database password: %w", err)
	}
	return pw, true, nil
}

// movePassword moves the password an earlier Resolute kept in the server's
// directory to path. The postgres user could have put anything there: it
// is read through readIn (no link out, a regular file), and when it cannot
// be, a new password is made instead (secure sets it at every start).
func (s *Server) movePassword(path string) {
	b, err := s.readIn("password")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if pw := string(bytes.TrimSpace(b)); err == nil && pw != "" {
		if err := writePassword(path, pw); err != nil {
			s.logger.Warn("embedded database: cannot move the password out of its directory; making a new one", "err", err)
		} else {
			s.logger.Info("embedded database: its password moved out of the postgres user's directory", "password_file", path)
		}
	}
	if root, err := os.OpenRoot(s.dir); err == nil {
		root.Remove("password") // unlinks a link, never what it names
		root.Close()
	}
}

// writePassword writes pw to path, mode 0600, through a new file that
// nothing else can have opened or linked.
func writePassword(path, pw string) error {
	tmp := path + ".new"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(pw + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// setPassword sets the superuser's password in single-user mode, with no
// server listening. PostgreSQL is given only its SCRAM verifier.
func (s *Server) setPassword(ctx context.Context, pw string) error {
	salt := make([]byte, 16)
	rand.Read(salt)
	stmt := fmt.Sprintf("ALTER ROLE postgres PASSWORD '%s';\n", scramVerifier(pw, salt, scramIterations))
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "postgres"), "--single", "-D", s.dataDir,
		"-c", "log_min_error_statement=panic", "postgres")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.dir
	cmd.Stdin = strings.NewReader(stmt)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	// Single-user mode exits 0 after a failed statement: its ERROR says so.
	var failed []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "ERROR:") || strings.Contains(line, "FATAL:") || strings.Contains(line, "PANIC:") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	if err != nil || len(failed) > 0 {
		return fmt.Errorf("set the embedded database's password: %v: %s", err, strings.Join(failed, " | "))
	}
	return nil
}

// scramVerifier is what PostgreSQL stores for a SCRAM-SHA-256 password
// (RFC 5802, RFC 7677): SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey.
// pw is ASCII, which SASLprep leaves as it is.
func scramVerifier(pw string, salt []byte, iterations int) string {
	salted, err := pbkdf2.Key(sha256.New, pw, salt, iterations, sha256.Size)
	if err != nil {
		panic(err) // only for parameters FIPS mode forbids; ours are fixed
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key")))
}
