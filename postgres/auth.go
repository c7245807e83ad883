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
# password in ../password (SCRAM). There is no TCP listener.
local all postgres scram-sha-256
`

// scramIterations is PostgreSQL's default for SCRAM-SHA-256 verifiers.
const scramIterations = 4096

// secure makes the cluster accept only the master, before the server
// listens: the superuser's password is set to the one in <dir>/password
// (made now when there is none) and pg_hba.conf allows nothing but it.
// Every start does it, so a directory made with --auth=trust by an earlier
// Resolute is upgraded in place, and a changed pg_hba.conf is put back.
func (s *Server) secure(ctx context.Context, fresh bool) error {
	pw, _, err := s.ensurePassword()
	if err != nil {
		return err
	}
	old, _ := os.ReadFile(filepath.Join(s.dataDir, "pg_hba.conf"))
	if !fresh && !bytes.Equal(old, []byte(hbaConf)) {
		s.logger.Info("embedded database: from now on only the master's password opens it (pg_hba.conf rewritten)",
			"password_file", s.passwordFile())
	}
	s.password = pw
	if err := s.setPassword(ctx, pw); err != nil {
		return err
	}
	return s.writeOwned(filepath.Join(s.dataDir, "pg_hba.conf"), []byte(hbaConf))
}

// passwordFile is where the superuser's password is kept: the master's
// file (mode 0600), outside PostgreSQL's data directory.
func (s *Server) passwordFile() string { return filepath.Join(s.dir, "password") }

// ensurePassword reads the password, or makes a random one when there is
// none yet; made says it did.
func (s *Server) ensurePassword() (pw string, made bool, err error) {
	path := s.passwordFile()
	b, err := os.ReadFile(path)
	if err == nil && len(bytes.TrimSpace(b)) > 0 {
		// The file is the master's alone, whatever it was given.
		if err := os.Chmod(path, 0o600); err != nil {
			return "", false, fmt.Errorf("embedded database password: %w", err)
		}
		return string(bytes.TrimSpace(b)), false, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("embedded database password: %w", err)
	}
	pw = rand.Text() + rand.Text()
	tmp := path + ".new"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("embedded database password: %w", err)
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
		return "", false, fmt.Errorf("embedded database password: %w", err)
	}
	return pw, true, nil
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

// writeOwned replaces a file of the server's with data, owned by the
// server's user and private to it.
func (s *Server) writeOwned(path string, data []byte) error {
	tmp := path + ".resolute"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(tmp, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// privateDir creates d (or takes it as it is) as a directory of the
// server's user with mode 0700. One that is a link, or that belongs to
// anybody else (a directory made in /tmp by another user, to read the
// socket's traffic or stand in for it), is refused.
func (s *Server) privateDir(d string) error {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", d, err)
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a link?); remove it", d)
	}
	owner := fi.Sys().(*syscall.Stat_t).Uid
	if owner != uint32(os.Geteuid()) && (s.cred == nil || owner != s.cred.Uid) {
		return fmt.Errorf("%s belongs to uid %d, not to the master or the postgres user; remove it", d, owner)
	}
	if s.cred != nil {
		if err := os.Chown(d, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("give %s to the postgres user: %w", d, err)
		}
	}
	if err := os.Chmod(d, 0o700); err != nil {
		return fmt.Errorf("make %s private: %w", d, err)
	}
	return nil
}
