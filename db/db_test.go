package db_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

func bootstrapped(t testing.TB) *db.DB {
	t.Helper()
	d := dbtest.New(t)
	if err := d.Bootstrap(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBootstrapIsIdempotentAndKeepsPasswords(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, "hash-1"); err != nil {
		t.Fatal(err)
	}
	id1, _ := d.ClusterID(ctx)
	if err := d.Bootstrap(ctx, "hash-2"); err != nil {
		t.Fatal(err)
	}
	id2, _ := d.ClusterID(ctx)
	if id1 == "" || id1 != id2 {
		t.Fatalf("cluster id changed: %q then %q", id1, id2)
	}
	admin, err := d.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if !admin.Admin || admin.PasswordHash != "hash-1" {
		t.Fatalf("admin = %+v; want an administrator with the first hash", admin)
	}
	det, err := d.UserByUsername(ctx, "determined")
	if err != nil || det.Admin {
		t.Fatalf("determined = %+v, %v; want a non-admin user", det, err)
	}
	ws, err := d.Workspaces(ctx, nil)
	if err != nil || len(ws) != 1 || ws[0].Name != "Uncategorized" || !ws[0].Immutable || ws[0].NumProjects != 1 {
		t.Fatalf("workspaces = %+v, %v", ws, err)
	}
}

func TestANewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	url := dbtest.NewURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Open(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "the database schema is at version 9999 but this Resolute knows versions up to") {
		t.Fatalf("err = %v", err)
	}
}

// TestAnAllocationPutBackInTheQueueForgetsItsRendezvous: pods of a gang
// that was requeued (some pods stayed Pending) must not meet the earlier
// launch's addresses when it is launched again.
func TestAnAllocationPutBackInTheQueueForgetsItsRendezvous(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.CreateAllocation(ctx, "trial-1.1", "trial-1", nil, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := d.StartAllocation(ctx, "trial-1.1", []int{0, 1}, []byte("h")); err != nil {
		t.Fatal(err)
	}
	if err := d.PostRendezvous(ctx, "trial-1.1", db.RendezvousPod{Rank: 0, Addr: "10.0.0.1", Slots: 1}); err != nil {
		t.Fatal(err)
	}
	if pods, err := d.Rendezvous(ctx, "trial-1.1"); err != nil || len(pods) != 1 || pods[0].Addr != "10.0.0.1" {
		t.Fatalf("rendezvous %+v %v", pods, err)
	}
	if err := d.UnstartAllocation(ctx, "trial-1.1"); err != nil {
		t.Fatal(err)
	}
	if pods, err := d.Rendezvous(ctx, "trial-1.1"); err != nil || len(pods) != 0 {
		t.Fatalf("after requeueing, rendezvous %+v %v", pods, err)
	}
}
