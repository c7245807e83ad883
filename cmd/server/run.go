package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/live"
	"github.com/resolute-ml/resolute/masterconf"
	"github.com/resolute-ml/resolute/masterlog"
	"github.com/resolute-ml/resolute/monitoring"
	"github.com/resolute-ml/resolute/postgres"
)

// run builds the master in order, serves until ctx ends, then shuts down in
// reverse. ready, when not nil, receives the listening address once the
// server accepts requests (tests use it).
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	start := time.Now()
	cfg, err := masterconf.Load(args, getenv, stderr)
	if masterconf.IsHelp(err) {
		return nil
	} else if err != nil {
		return err
	}
	logs := masterlog.NewBuffer(5000)
	logger := newLogger(cfg.Log, stderr, logs)
	tasksURL, warning := cfg.TaskOrigin()
	if warning != "" {
		logger.Warn(warning)
	}
	if os.Geteuid() == 0 { // tasks run as other users, who must not read the master's secrets
		for _, w := range cfg.ExposedSecrets() {
			logger.Warn(w)
		}
	}

	// Tasks, running as their own Unix users, pass through the data
	// directory to their work directories and homes; they list nothing.
	if err := os.MkdirAll(cfg.DataDir, 0o711); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	dbURL, pg, err := startDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	var databaseDown func() string
	if pg != nil {
		defer func() {
			if err := pg.Stop(); err != nil {
				logger.Error("stop embedded database", "err", err)
			} else {
				logger.Info("embedded database stopped")
			}
		}()
		go pg.Run(ctx) // restarts it should it die
		databaseDown = pg.Down
	}
	database, err := db.Open(ctx, dbURL, logger)
	if err != nil {
		return err
	}
	defer database.Close()
	hash, err := auth.HashPassword(cfg.InitialPassword())
	if err != nil {
		return fmt.Errorf("security.initial_user_password: %w", err)
	}
	if err := database.Bootstrap(ctx, hash); err != nil {
		return err
	}
	clusterID, err := database.ClusterID(ctx)
	if err != nil {
		return err
	}

	uploads, err := uploadDir(cfg.DataDir)
	if err != nil {
		return err
	}
	configs := control.NewConfigs(database, cfg.Defaults(),
		control.WithPoolDefaults(cfg.PoolDefaults(), cfg.ComputePool()))
	mon := monitoring.New()
	webhooks := control.NewWebhookSender(database, cfg.Webhooks.SigningKey, cfg.Webhooks.BaseURL, logger)
	go webhooks.Run(ctx)
	st, err := startExperiments(ctx, cfg, database, configs, mon, clusterID, webhooks, logger)
	if err != nil {
		return err
	}
	defer st.close()
	runner := st.runner
	metrics := control.NewMetricsWriter(database, logger)
	series := control.NewSeriesMerger(database, logger)
	metrics.AfterStore(series.Wake)
	go series.Run(ctx)
	go metrics.Run(ctx)
	changes := live.New(database, logger)
	go changes.Run(ctx)
	go changes.Follow(ctx, live.MasterLogs, logs.Changed)

	serviceOpts := []control.ServicesOption{control.WithMinPasswordLength(cfg.Security.MinPasswordLength),
		control.WithLogRetention(cfg.LogRetentionDays())}
	if cfg.Security.Authz.RBAC() {
		serviceOpts = append(serviceOpts, control.WithRBAC())
		logger.Info("authorization: rbac (roles assigned to users and groups decide)")
	}
	services := control.NewServices(database, runner, metrics, logger, serviceOpts...)
	go services.LogRetention.Run(ctx, cfg.RetentionSchedule())
	shown, err := cfg.Redacted()
	if err != nil {
		return err
	}
	h := handlers.New(handlers.Config{
		MasterConfig: shown,
		Master: resolute.MasterInfo{
			Version: resolute.Version, ClusterID: clusterID, ClusterName: "resolute",
			ResourceManager: cfg.ResourceManager.Type, URL: cfg.URL(),
		},
		TasksURL:        tasksURL,
		SessionLifetime: cfg.Security.SessionLifetime.Duration,
		SecureCookies:   cfg.TLS.Cert != "",
		MaxBodyBytes:    cfg.MaxRequestBodyBytes,
		UploadDir:       uploads, MaxConcurrentUploads: cfg.MaxConcurrentUploads,
		TrustedProxies: cfg.Security.TrustedProxyPrefixes(),
		Metrics:        handlers.MetricsAccess{Enabled: cfg.Observability.EnablePrometheus, Token: cfg.Observability.MetricsToken},
	}, handlers.Deps{DB: database, Services: services, Configs: configs,
		Queue: runner.Queue, Admission: runner.Admission, Logger: logger, Logs: logs,
		Terminals: st.terminals, Changes: changes, DatabaseDown: databaseDown, Monitoring: mon})
	mon.Read(monitoring.Sources{
		Pools: runner.Queue.ResourcePools, Agents: runner.Queue.Agents,
		Ping: database.Ping, DatabaseDown: databaseDown, DatabaseConns: database.Conns,
		TrialSystemMetrics: database.RunningTrialSystemMetrics,
		MetricReports:      metrics.Stored, SSEClients: h.SSEClients, ProxyBytes: h.Proxy().Bytes,
	})

	go runner.Tasks.WatchIdle(ctx, h.Proxy().LastActivity, 5*time.Second)

	// Two listeners: the master's origin, and the task origin, which
	// serves only what tasks serve (handlers/proxy.go).
	servers := []*http.Server{
		{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
		{Handler: h.TaskHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
	}
	var listeners []net.Listener
	for i, port := range []int{cfg.Port, cfg.TaskPort()} {
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			if i == 1 {
				return fmt.Errorf("listen on tasks_port %d (the task origin): %w", port, err)
			}
			return fmt.Errorf("listen on port %d: %w", port, err)
		}
		listeners = append(listeners, ln)
	}
	serveErr := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if cfg.TLS.Cert != "" {
				serveErr <- srv.ServeTLS(listeners[i], cfg.TLS.Cert, cfg.TLS.Key)
			} else {
				serveErr <- srv.Serve(listeners[i])
			}
		}()
	}
	go expireSessions(ctx, database, logger)
	logger.Info("resolute is ready", "url", cfg.URL(), "tasks_url", tasksURL, "version", resolute.Version,
		"startup", time.Since(start).Round(time.Millisecond), "cluster_id", clusterID)
	if ready != nil {
		ready <- listeners[0].Addr().String()
	}

	select {
	case err := <-serveErr:
		for _, srv := range servers {
			srv.Close()
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			logger.Warn("requests still open at shutdown were cut", "err", err)
		}
	}
	for range servers {
		if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

func newLogger(c masterconf.Log, w io.Writer, logs *masterlog.Buffer) *slog.Logger {
	var level slog.Level
	level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(masterlog.NewHandler(h, logs))
}

// startDatabase returns the database URL: the configured server's, or that of
// a private server started in <data_dir>/postgres.
func startDatabase(ctx context.Context, cfg masterconf.Config, logger *slog.Logger) (string, *postgres.Server, error) {
	if cfg.DB.Host != "" {
		u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.DB.User, cfg.DB.Password),
			Host: net.JoinHostPort(cfg.DB.Host, strconv.Itoa(cfg.DB.Port)), Path: "/" + cfg.DB.Name}
		q := url.Values{"sslmode": {cfg.DB.SSLMode}}
		if strings.HasPrefix(cfg.DB.Host, "/") {
			// A directory: the server's unix socket.
			u.Host = ""
			q.Set("host", cfg.DB.Host)
			q.Set("port", strconv.Itoa(cfg.DB.Port))
		}
		u.RawQuery = q.Encode()
		return u.String(), nil, nil
	}
	pg, err := postgres.Start(ctx, filepath.Join(cfg.DataDir, "postgres"), logger)
	if err != nil {
		return "", nil, fmt.Errorf("embedded database: %w", err)
	}
	if err := pg.EnsureDatabase(ctx, cfg.DB.Name); err != nil {
		pg.Stop()
		return "", nil, fmt.Errorf("embedded database: %w", err)
	}
	return pg.URL(cfg.DB.Name), pg, nil
}

// uploadDir makes <data_dir>/uploads, where uploads are streamed to
// temporary files, empty: whatever an earlier run left there goes.
func uploadDir(dataDir string) (string, error) {
	dir := filepath.Join(dataDir, "uploads")
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

// expireSessions removes expired sessions, task tickets and task sessions
// every hour; while the database is unavailable it waits for the next hour.
func expireSessions(ctx context.Context, database *db.DB, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := database.DeleteExpiredSessions(ctx); db.Unavailable(err) || ctx.Err() != nil {
				continue
			} else if err != nil {
				logger.Error("delete expired sessions", "err", err)
			} else if n > 0 {
				logger.Info("deleted expired sessions", "count", n)
			}
			if n, err := database.DeleteExpiredTaskCredentials(ctx); err != nil {
				logger.Error("delete expired task tickets and sessions", "err", err)
			} else if n > 0 {
				logger.Info("deleted expired task tickets and sessions", "count", n)
			}
		}
	}
}
