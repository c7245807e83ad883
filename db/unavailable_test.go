package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/postgres"
)

// TestTheErrorsOfADatabaseThatDiedAreUnavailable kills a private server
// with SIGKILL under an open pool: what the pool then answers is
// unavailability, both on connections it held and on new ones.
func TestTheErrorsOfADatabaseThatDiedAreUnavailable(t *testing.T) {
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "resolute-db-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := postgres.Start(ctx, filepath.Join(dir, "pg"), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	d, err := db.Open(ctx, srv.URL("postgres"), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// Statements that fail while the server runs are not unavailability.
	_, notFound := d.Experiment(ctx, 12345)
	_, conflict := d.CreateUser(ctx, "admin", "", "", false)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range map[string]error{
		"not found": notFound, "a conflict": conflict, "a canceled context": d.Ping(canceled),
		"a resolute error": resolute.Errorf(resolute.EInvalid, "bad"), "nil": nil,
	} {
		if db.Unavailable(err) {
			t.Errorf("%s (%v) is taken for unavailability", name, err)
		}
	}

	pid, _ := strconv.Atoi(strings.SplitN(readFile(t, filepath.Join(srv.DataDir(), "postmaster.pid")), "\n", 2)[0])
	syscall.Kill(pid, syscall.SIGKILL)
	// The backends the pool holds may answer a moment longer, until they
	// see their postmaster gone.
	deadline := time.Now().Add(30 * time.Second)
	_, err = d.Experiment(ctx, 1)
	for ; resolute.ErrorCode(err) == resolute.ENotFound; _, err = d.Experiment(ctx, 1) {
		if time.Now().After(deadline) {
			t.Fatal("the pool still reads 30s after its server was killed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the first error: %v", err)
	if !db.Unavailable(err) {
		t.Errorf("the first error, %v, is not unavailability", err)
	}
	for i := range 5 {
		_, err := d.Experiment(ctx, 1)
		if !db.Unavailable(err) {
			t.Errorf("try %d: %v (%T) is not unavailability", i, err, errors.Unwrap(err))
		}
		if err := d.InTx(ctx, func(q *db.Queries) error { _, err := q.Experiment(ctx, 1); return err }); !db.Unavailable(err) {
			t.Errorf("try %d, in a transaction: %v is not unavailability", i, err)
		}
	}
	if err := fmt.Errorf("wrapped: %w", d.Ping(ctx)); !db.Unavailable(err) {
		t.Errorf("ping: %v is not unavailability", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
