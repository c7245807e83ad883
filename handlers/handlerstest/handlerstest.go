// Package handlerstest starts Resolute's real router over a fresh test
// database, for tests of the API, the CLI and the browser pages.
package handlerstest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/masterlog"
)

// Master is a running test master.
type Master struct {
	URL  string
	DB   *db.DB
	Logs *masterlog.Buffer
	srv  *httptest.Server
}

// Options tune a test master.
type Options struct {
	// InitialPassword is given to admin and determined; "" means none.
	InitialPassword string
	// MaxBodyBytes defaults to 1 MiB.
	MaxBodyBytes int64
	// Defaults is the master's config layer (checkpoint storage and task
	// container defaults); default: shared_fs in a temporary directory.
	Defaults []byte
}

// Start runs a master on a fresh database until t ends.
func Start(t testing.TB, opts Options) *Master {
	t.Helper()
	d := dbtest.New(t)
	hash, err := auth.HashPassword(opts.InitialPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Bootstrap(context.Background(), hash); err != nil {
		t.Fatal(err)
	}
	if opts.Defaults == nil {
		opts.Defaults, err = expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": t.TempDir()}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	logs := masterlog.NewBuffer(1000)
	logger := slog.New(masterlog.NewHandler(slog.NewTextHandler(io.Discard, nil), logs))
	clusterID, err := d.ClusterID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := &Master{DB: d, Logs: logs}
	m.srv = httptest.NewUnstartedServer(nil)
	m.URL = "http://" + m.srv.Listener.Addr().String()
	h := handlers.New(handlers.Config{
		Master: resolute.MasterInfo{Version: resolute.Version, ClusterID: clusterID, ClusterName: "resolute",
			ResourceManager: "local", URL: m.URL},
		SessionLifetime: time.Hour,
		MaxBodyBytes:    opts.MaxBodyBytes,
	}, d, control.NewConfigs(d, opts.Defaults), logger, logs)
	m.srv.Config.Handler = h.Handler()
	m.srv.Start()
	t.Cleanup(m.srv.Close)
	return m
}
