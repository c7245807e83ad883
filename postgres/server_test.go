package postgres

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestStartInitializesThenReusesTheDirectory(t *testing.T) {
	dir := tempDir(t)
	ctx := context.Background()

	srv := start(t, dir)
	execSQL(t, srv.URL("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	srv = start(t, dir)
	t.Logf("restart with an existing directory took %v", time.Since(begin))
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 7 {
		t.Fatalf("row from the first start: v=%d err=%v", v, err)
	}
}

// start starts a server in dir, stopped when t ends.
func start(t *testing.T, dir string) *Server {
	t.Helper()
	if _, err := BinDir(); err != nil {
		t.Skip(err)
	}
	srv, err := Start(context.Background(), dir, discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

// tempDir is a directory the postgres user can enter when we run as root.
func tempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "resolute-pg-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "pg")
}
