// Package handlerstest starts Resolute's real router over a fresh test
// database, for tests of the API, the CLI and the browser pages.
package handlerstest

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	URL string
	// TasksURL is the task origin, http://localhost:PORT: another host
	// than the master's 127.0.0.1, as a browser sees it. With
	// Options.TaskHosts it is http://{task}.localhost:PORT (see TaskOrigin).
	TasksURL      string
	DB            *db.DB
	DatabaseURL   string // the test database, for tests that seed it in bulk
	Logs          *masterlog.Buffer
	Experiments   *control.Experiments // Runner.Experiments
	Tasks         *control.Tasks       // Runner.Tasks
	Runner        *control.Runner
	RM            *local.Manager
	CheckpointDir string // the default shared_fs storage
	UploadDir     string // where uploads are spooled
	// TaskUIDBase is the master's task_uid_base, one of its own (see
	// NewTaskUIDBase): unlinked users' tasks run as TaskUIDBase + user id.
	TaskUIDBase int
	srv, tasks  *httptest.Server
}

// NewTaskUIDBase is a task_uid_base for one test master: chosen at random
// among 99998 of them, between 2000010000 and 2999990000, 10000 ids
// apart. Every master's tasks of user 1 would otherwise run as uid
// 2000000001, and when one of a master's allocations ends it kills every
// process its uid still runs (local's strays.go): those of another master's
// tasks, running beside it in this test process or another, too. (The
// local package's own tests take uids from 3000000000.)
func NewTaskUIDBase() int {
	return resolute.DefaultTaskUIDBase + (1+rand.IntN(99_998))*10_000
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
	// ExtraPools are pools beside "default", with its scheduler: with
	// them, "default" has slot 0 and the i-th extra pool slot i+1 (Slots
	// must be enough).
	ExtraPools []string
	// Live tunes the change listener (the benchmark's table topics).
	Live []live.Option
	// DatabaseDown stands for the embedded database's supervisor (GET
	// /health); nil: none, as with an external database.
	DatabaseDown func() string
	// MaxConcurrentUploads defaults to handlers.DefaultMaxConcurrentUploads.
	MaxConcurrentUploads int
	// UploadIdleTimeout and UploadWaitTimeout default to handlers'
	// DefaultUploadIdleTimeout and DefaultUploadWaitTimeout.
	UploadIdleTimeout, UploadWaitTimeout time.Duration
	// SecureCookies marks cookies Secure, as under TLS.
	SecureCookies bool
	// MinPasswordLength of new passwords; default the master's, 8.
	MinPasswordLength int
	// TrustedProxies whose X-Forwarded-* headers are believed; none by
	// default.
	TrustedProxies []netip.Prefix
	// GPUs are the local resource manager's GPUs; nil: none (CPU slots).
	GPUs local.GPUs
	// TaskHosts gives every task an origin of its own,
	// http://<task id>.localhost:PORT (browsers resolve every *.localhost
	// to loopback), instead of the one task origin.
	TaskHosts bool
	// RBAC runs the master with security.authz.type: rbac.
	RBAC bool
	// MasterConfig is what GET /api/v1/master/config shows (masterconf's
	// Redacted); nil: none.
	MasterConfig map[string]any
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
	// Tasks run as their owners' Unix users (when tests run as root): they
	// must reach the harness and their work dirs, and write checkpoints.
	dir := TempDir(t)
	checkpoints := filepath.Join(dir, "checkpoints")
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
	m := &Master{DB: d, DatabaseURL: dbURL, Logs: logs, CheckpointDir: checkpoints, TaskUIDBase: NewTaskUIDBase()}
	m.srv = httptest.NewUnstartedServer(nil)
	m.URL = "http://" + m.srv.Listener.Addr().String()
	m.tasks = httptest.NewUnstartedServer(nil)
	m.TasksURL = "http://localhost:" + strconv.Itoa(m.tasks.Listener.Addr().(*net.TCPAddr).Port)
	if opts.TaskHosts {
		m.TasksURL = "http://" + resolute.TaskPlaceholder + ".localhost:" + strconv.Itoa(m.tasks.Listener.Addr().(*net.TCPAddr).Port)
	}

	// Trials run as real processes with the real harness.
	rt, err := harness.Install(filepath.Join(dir, "harness"), harness.DefaultPython())
	if err != nil {
		t.Fatal(err)
	}
	m.UploadDir = filepath.Join(dir, "uploads")
	if err := os.Mkdir(m.UploadDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var gpus local.GPUs = local.DiscoverFunc(func(context.Context) ([]local.GPU, error) { return nil, nil })
	if opts.GPUs != nil {
		gpus = opts.GPUs
	}
	m.RM, err = local.New(local.Options{StateDir: filepath.Join(dir, "allocations"), Slots: opts.Slots,
		GPUs:       gpus,
		HarnessDir: rt.PythonPath, BinDir: rt.BinDir, Python: rt.Python,
		WorkRoot: filepath.Join(dir, "work"), SharedDirs: []string{checkpoints}})
	if err != nil {
		t.Fatal(err)
	}
	configs := control.NewConfigs(d, opts.Defaults)
	m.Runner = control.NewRunner(d, configs, m.RM, control.RunOptions{MasterURL: m.URL, ClusterID: clusterID, TaskUIDBase: m.TaskUIDBase,
		WorkRoot: filepath.Join(dir, "work"), KillGrace: time.Second, Pools: pools(opts.Scheduler, opts.ExtraPools)}, logger)
	m.Experiments, m.Tasks = m.Runner.Experiments, m.Runner.Tasks
	metrics := control.NewMetricsWriter(d, logger)
	ctx, cancel := context.WithCancel(context.Background())
	series := control.NewSeriesMerger(d, logger)
	metrics.AfterStore(series.Wake)
	go series.Run(ctx)
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
	if opts.RBAC {
		services = append(services, control.WithRBAC())
	}
	h := handlers.New(handlers.Config{
		Master: resolute.MasterInfo{Version: resolute.Version, ClusterID: clusterID, ClusterName: "resolute",
			ResourceManager: "local", URL: m.URL},
		TasksURL:        resolute.TasksURL(m.TasksURL),
		SessionLifetime: time.Hour,
		MaxBodyBytes:    opts.MaxBodyBytes,
		UploadDir:       m.UploadDir, MaxConcurrentUploads: opts.MaxConcurrentUploads,
		UploadIdleTimeout: opts.UploadIdleTimeout, UploadWaitTimeout: opts.UploadWaitTimeout,
		SecureCookies:  opts.SecureCookies,
		TrustedProxies: opts.TrustedProxies,
		MasterConfig:   opts.MasterConfig,
	}, handlers.Deps{DB: d, Services: control.NewServices(d, m.Runner, metrics, logger, services...), Configs: configs,
		Queue: m.Runner.Queue, Admission: m.Runner.Admission, Logger: logger, Logs: logs,
		Terminals: m.RM, Changes: changes, DatabaseDown: opts.DatabaseDown})
	go m.Tasks.WatchIdle(ctx, h.Proxy().LastActivity, 200*time.Millisecond)
	m.srv.Config.Handler = h.Handler()
	m.srv.Start()
	m.tasks.Config.Handler = h.TaskHandler()
	m.tasks.Start()
	t.Cleanup(func() {
		// Stop every task this master started, then the master.
		for _, a := range m.RM.Capacity().Allocations {
			m.RM.Kill(context.Background(), a.AllocationID, 0)
		}
		cancel()
		m.RM.Close()
		m.tasks.Close()
		m.srv.Close()
	})
	return m
}

// TaskOrigin is the origin where task id is served: TasksURL, or the
// task's own.
func (m *Master) TaskOrigin(id string) string {
	return resolute.TasksURL(m.TasksURL).Origin(id)
}

// LocalhostTransport reaches every *.localhost on the loopback, as
// browsers do, for clients of the task hosts of Options.TaskHosts.
func LocalhostTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(host, ".localhost") {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return dialer.DialContext(ctx, network, addr)
	}}
}

// TempDir is a temporary directory that tasks, which run as their owners'
// Unix users, can pass through (t.TempDir's parent is mode 0700), removed
// when t ends: for what tests give tasks to run or read.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "resolute-master-")
	if err == nil {
		err = os.Chmod(dir, 0o711)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// pools is the one pool of a test master, or with extra pools a slot each.
func pools(c scheduler.Config, extra []string) []control.Pool {
	if c.Type == "" {
		c.Type = scheduler.TypePriority
	}
	if c.FittingPolicy == "" {
		c.FittingPolicy = scheduler.FitBest
	}
	if c.DefaultPriority == 0 {
		c.DefaultPriority = 42
	}
	if len(extra) == 0 {
		return []control.Pool{{Name: "default", Scheduler: c}}
	}
	out := []control.Pool{{Name: "default", Scheduler: c, SlotIDs: []int{0}}}
	for i, name := range extra {
		out = append(out, control.Pool{Name: name, Scheduler: c, SlotIDs: []int{i + 1}})
	}
	return out
}
