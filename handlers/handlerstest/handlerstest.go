// Package handlerstest starts Resolute's real router over a fresh test
// database, for tests of the API, the CLI and the browser pages.
package handlerstest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/harness"
	"github.com/resolute-ml/resolute/live"
	"github.com/resolute-ml/resolute/local"
	"github.com/resolute-ml/resolute/masterlog"
	"github.com/resolute-ml/resolute/scheduler"
)

// Master is a running test master.
type Master struct {
	URL           string
	DB            *db.DB
	DatabaseURL   string // the test database, for tests that seed it in bulk
	Logs          *masterlog.Buffer
	Experiments   *control.Experiments // Runner.Experiments
	Tasks         *control.Tasks       // Runner.Tasks
	Runner        *control.Runner
	RM            *local.Manager
	CheckpointDir string // the default shared_fs storage
	srv           *httptest.Server
}

// Options tune a test master.
type Options struct {
	// InitialPassword is given to admin and determined; "" means none.
	InitialPassword string
	// MaxBodyBytes defaults to 1 MiB.
	MaxBodyBytes int64
	// Defaults is the master's config layer (checkpoint storage and task
	// container defaults); default: shared_fs in CheckpointDir.
	Defaults []byte
	// Slots is the number of CPU slots of the local resource manager that
	// runs experiments' trials as real processes; default 2.
	Slots int
	// Scheduler of the one pool, "default"; zero: priority without
	// preemption.
	Scheduler scheduler.Config
	// Live tunes the change listener (the benchmark's table topics).
	Live []live.Option
	// MinPasswordLength of new passwords; default the master's, 8.
	MinPasswordLength int
	// TrustedProxies whose X-Forwarded-* headers are believed; none by
	// default.
	TrustedProxies []netip.Prefix
}

// Start runs a master on a fresh database until t ends.
func Start(t testing.TB, opts Options) *Master {
	t.Helper()
	dbURL := dbtest.NewURL(t)
	d, err := db.Open(context.Background(), dbURL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(d.Close)
	hash, err := auth.HashPassword(opts.InitialPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Bootstrap(context.Background(), hash); err != nil {
		t.Fatal(err)
	}
	checkpoints := t.TempDir()
	if opts.Defaults == nil {
		opts.Defaults, err = expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": checkpoints}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if opts.Slots == 0 {
		opts.Slots = 2
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
	m := &Master{DB: d, DatabaseURL: dbURL, Logs: logs, CheckpointDir: checkpoints}
	m.srv = httptest.NewUnstartedServer(nil)
	m.URL = "http://" + m.srv.Listener.Addr().String()

	// Trials run as real processes with the real harness.
	dir := t.TempDir()
	rt, err := harness.Install(filepath.Join(dir, "harness"), harness.DefaultPython())
	if err != nil {
		t.Fatal(err)
	}
	m.RM, err = local.New(local.Options{StateDir: filepath.Join(dir, "allocations"), Slots: opts.Slots,
		Discover:   func(context.Context) ([]local.GPU, error) { return nil, nil },
		HarnessDir: rt.PythonPath, BinDir: rt.BinDir, Python: rt.Python})
	if err != nil {
		t.Fatal(err)
	}
	configs := control.NewConfigs(d, opts.Defaults)
	m.Runner = control.NewRunner(d, configs, m.RM, control.RunOptions{MasterURL: m.URL, ClusterID: clusterID,
		WorkRoot: filepath.Join(dir, "work"), KillGrace: time.Second, Pools: pools(opts.Scheduler)}, logger)
	m.Experiments, m.Tasks = m.Runner.Experiments, m.Runner.Tasks
	metrics := control.NewMetricsWriter(d, logger)
	ctx, cancel := context.WithCancel(context.Background())
	go metrics.Run(ctx)
	go m.Runner.Admission.Pump(ctx)
	go m.Runner.Admission.Run(ctx)
	changes := live.New(d, logger, opts.Live...)
	go changes.Run(ctx)
	go changes.Follow(ctx, live.MasterLogs, logs.Changed)
	select { // changes made before it listens would go unseen
	case <-changes.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the change listener did not start listening")
	}

	var services []control.ServicesOption
	if opts.MinPasswordLength != 0 {
		services = append(services, control.WithMinPasswordLength(opts.MinPasswordLength))
	}
	h := handlers.New(handlers.Config{
		Master: resolute.MasterInfo{Version: resolute.Version, ClusterID: clusterID, ClusterName: "resolute",
			ResourceManager: "local", URL: m.URL},
		SessionLifetime: time.Hour,
		MaxBodyBytes:    opts.MaxBodyBytes,
		TrustedProxies:  opts.TrustedProxies,
	}, handlers.Deps{DB: d, Services: control.NewServices(d, m.Runner, metrics, logger, services...), Configs: configs,
		Queue: m.Runner.Queue, Admission: m.Runner.Admission, Logger: logger, Logs: logs,
		Terminals: m.RM, Changes: changes})
	go m.Tasks.WatchIdle(ctx, h.Proxy().LastActivity, 200*time.Millisecond)
	m.srv.Config.Handler = h.Handler()
	m.srv.Start()
	t.Cleanup(func() {
		// Stop every task this master started, then the master.
		for _, a := range m.RM.Capacity().Allocations {
			m.RM.Kill(context.Background(), a.AllocationID, 0)
		}
		cancel()
		m.RM.Close()
		m.srv.Close()
	})
	return m
}

// pools is the one pool of a test master.
func pools(c scheduler.Config) []control.Pool {
	if c.Type == "" {
		c.Type = scheduler.TypePriority
	}
	if c.FittingPolicy == "" {
		c.FittingPolicy = scheduler.FitBest
	}
	if c.DefaultPriority == 0 {
		c.DefaultPriority = 42
	}
	return []control.Pool{{Name: "default", Scheduler: c}}
}
