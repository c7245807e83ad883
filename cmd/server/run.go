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

	dbURL, pg, err := startDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if pg != nil {
		defer func() {
			if err := pg.Stop(); err != nil {
				logger.Error("stop embedded database", "err", err)
			} else {
				logger.Info("embedded database stopped")
			}
		}()
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

	configs := control.NewConfigs(database, cfg.Defaults(),
		control.WithPoolDefaults(cfg.PoolDefaults(), cfg.ComputePool()))
	st, err := startExperiments(ctx, cfg, database, configs, clusterID, logger)
	if err != nil {
		return err
	}
	defer st.close()
	runner := st.runner
	metrics := control.NewMetricsWriter(database, logger)
	go metrics.Run(ctx)
	changes := live.New(database, logger)
	go changes.Run(ctx)
	go changes.Follow(ctx, live.MasterLogs, logs.Changed)

	services := control.NewServices(database, runner, metrics, logger,
		control.WithMinPasswordLength(cfg.Security.MinPasswordLength))
	h := handlers.New(handlers.Config{
		Master: resolute.MasterInfo{
			Version: resolute.Version, ClusterID: clusterID, ClusterName: "resolute",
			ResourceManager: cfg.ResourceManager.Type, URL: cfg.URL(),
		},
		SessionLifetime: cfg.Security.SessionLifetime.Duration,
		SecureCookies:   cfg.TLS.Cert != "",
		MaxBodyBytes:    cfg.MaxRequestBodyBytes,
		TrustedProxies:  cfg.Security.TrustedProxyPrefixes(),
	}, handlers.Deps{DB: database, Services: services, Configs: configs,
		Queue: runner.Queue, Admission: runner.Admission, Logger: logger, Logs: logs,
		Terminals: st.terminals, Changes: changes})

	go runner.Tasks.WatchIdle(ctx, h.Proxy().LastActivity, 5*time.Second)

	ln, err := net.Listen("tcp", ":"+strconv.Itoa(cfg.Port))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", cfg.Port, err)
	}
	srv := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 1)
	go func() {
		if cfg.TLS.Cert != "" {
			serveErr <- srv.ServeTLS(ln, cfg.TLS.Cert, cfg.TLS.Key)
		} else {
			serveErr <- srv.Serve(ln)
		}
	}()
	go expireSessions(ctx, database, logger)
	logger.Info("resolute is ready", "url", cfg.URL(), "version", resolute.Version,
		"startup", time.Since(start).Round(time.Millisecond), "cluster_id", clusterID)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("requests still open at shutdown were cut", "err", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
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

// expireSessions removes expired sessions every hour.
func expireSessions(ctx context.Context, database *db.DB, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := database.DeleteExpiredSessions(ctx); err != nil {
				logger.Error("delete expired sessions", "err", err)
			} else if n > 0 {
				logger.Info("deleted expired sessions", "count", n)
			}
		}
	}
}
