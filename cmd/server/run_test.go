package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/postgres"
)

// start runs the master with args until the returned stop is called, and
// returns its address.
func start(t testing.TB, args ...string) (addr string, stop func() error) {
	return startLogging(t, io.Discard, args...)
}

// startLogging is start with the master's log written to stderr.
func startLogging(t testing.TB, stderr io.Writer, args ...string) (addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, func(string) string { return "" }, stderr, ready) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("master did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("master did not start within 60s")
	}
	return addr, sync.OnceValue(func() error { cancel(); return <-done }) // safe to call twice
}

func TestTheMasterServesHTTPSOnItsEmbeddedDatabaseAndRestarts(t *testing.T) {
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "resolute-run-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	cert, key := selfSigned(t, dir)
	tasksPort := freePort(t)
	args := []string{"--data-dir", filepath.Join(dir, "data"), "--port", freePort(t), "--tasks-port", tasksPort, "--tls-cert", cert, "--tls-key", key}

	addr, stop := start(t, args...)
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	resp, err := client.Post("https://localhost:"+port+"/login", "application/x-www-form-urlencoded", strings.NewReader("username=admin&password="))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var secure bool
	for _, c := range resp.Cookies() {
		secure = secure || (c.Name == handlers.SecureCookieName && c.Secure && c.Path == "/" && c.Domain == "")
	}
	if !secure {
		t.Fatalf("the session cookie is not a Secure __Host- cookie under TLS: %v", resp.Cookies())
	}
	// The task origin is served with TLS too, on another host than the
	// master's, and sends what it does not serve to the master.
	resp, err = client.Get("https://127.0.0.1:" + tasksPort + "/dashboard")
	if err != nil {
		t.Fatalf("the task origin over TLS: %v", err)
	}
	resp.Body.Close()
	if want := "https://localhost:" + port + "/dashboard"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Fatalf("the task origin answers %d to %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}

	// A second start reuses the database and is quick.
	begin := time.Now()
	addr, stop = start(t, args...)
	took := time.Since(begin)
	t.Logf("start-up with an existing embedded database: %v", took)
	resp, err = client.Get("https://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health after restart: %v %v", resp, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestBadConfigStopsStartUp(t *testing.T) {
	err := run(context.Background(), []string{"--port", "http"}, func(string) string { return "" }, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), `port: expected an integer, got "http"`) {
		t.Fatalf("err = %v", err)
	}
}

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certFile, keyFile
}

func TestAnExternalDatabaseIsUsedWhenHostIsSet(t *testing.T) {
	host, name := externalDatabase(t)
	// Task users must pass through the data dir (t.TempDir's parent is 0700).
	dataDir, err := os.MkdirTemp("", "resolute-run-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dataDir, 0o711)
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	addr, stop := start(t, "--db-host", host, "--db-name", name, "--db-ssl-mode", "disable",
		"--port", freePort(t), "--tasks-port", freePort(t), "--data-dir", dataDir)
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// externalDatabase makes a fresh database on the test server and returns
// the server's host (or socket directory) and the database's name.
func externalDatabase(t *testing.T) (host, name string) {
	t.Helper()
	raw := os.Getenv("RESOLUTE_TEST_DATABASE_URL")
	if raw == "" {
		t.Skip("needs RESOLUTE_TEST_DATABASE_URL (make test sets it)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	host = u.Query().Get("host")
	if host == "" {
		host = u.Hostname()
	}
	conn, err := pgx.Connect(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	name = "run_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		conn.Close(context.Background())
	})
	return host, name
}

// TestADataDirTaskUsersCannotReachStopsStartUp: tasks run as their owners'
// users, who must pass through data_dir to their work dirs and the
// harness; a master that cannot give them that says how to.
func TestADataDirTaskUsersCannotReachStopsStartUp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a master running as root runs tasks as other users")
	}
	host, name := externalDatabase(t)
	closed := t.TempDir() // its parent is mode 0700
	err := run(context.Background(), []string{"--db-host", host, "--db-name", name, "--db-ssl-mode", "disable",
		"--port", freePort(t), "--tasks-port", freePort(t), "--data-dir", closed},
		func(string) string { return "" }, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "tasks run as their own Unix users, who cannot enter "+filepath.Dir(closed)) ||
		!strings.Contains(err.Error(), "`chmod o+x "+filepath.Dir(closed)+"`") {
		t.Fatalf("start = %v, want the reason and the chmod", err)
	}
}
