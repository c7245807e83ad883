// Package dbtest gives each test a fresh PostgreSQL database with Resolute's
// migrations applied.
//
// It uses the server at RESOLUTE_TEST_DATABASE_URL (a superuser URL; `make
// test` starts one) or, when that is unset, starts a private server for the
// test binary with package postgres. Migrations are applied once to a
// template database, and every test gets a copy of it, which takes
// milliseconds.
package dbtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/postgres"
)

// EnvURL names the variable holding the test server's superuser URL.
const EnvURL = "RESOLUTE_TEST_DATABASE_URL"

var (
	once      sync.Once
	serverURL string // URL of the "postgres" database on the test server
	template  string // name of the migrated template database
	server    *postgres.Server
	setupErr  error
)

// Main runs the tests of a package and stops the private server, if one was
// started. Call it from TestMain: os.Exit(dbtest.Main(m)).
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	return code
}

// New returns a fresh, migrated database for t, dropped when t ends.
func New(t testing.TB) *db.DB {
	t.Helper()
	url := NewURL(t)
	d, err := db.Open(context.Background(), url, discard())
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

// NewURL creates a fresh, migrated database for t and returns its URL; it is
// dropped when t ends. Use it to start a whole server against a database.
func NewURL(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("test database server: %v", setupErr)
	}
	ctx := context.Background()
	name := "test_" + randomHex(8)
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		t.Fatalf("connect to test server: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, serverURL)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return withDatabase(serverURL, name)
}

func setup() {
	ctx := context.Background()
	serverURL = os.Getenv(EnvURL)
	if serverURL == "" {
		dir, err := os.MkdirTemp("", "resolute-dbtest-")
		if err != nil {
			setupErr = err
			return
		}
		os.Chmod(dir, 0o755)
		server, err = postgres.Start(ctx, dir+"/pg", discard())
		if err != nil {
			setupErr = err
			return
		}
		serverURL = server.URL("postgres")
	}
	// Each test binary makes its own template, so concurrent packages never
	// copy a template another process is still migrating.
	template = "template_" + randomHex(8)
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		setupErr = err
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+template); err != nil {
		setupErr = err
		return
	}
	d, err := db.Open(ctx, withDatabase(serverURL, template), discard())
	if err != nil {
		setupErr = err
		return
	}
	d.Close()
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
