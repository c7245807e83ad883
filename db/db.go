package db

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is Resolute's database: a connection pool and the generated queries.
type DB struct {
	Queries // experiments, trials, allocations: usable directly or in InTx
	pool    *pgxpool.Pool
	q       *gen.Queries
}

// Queries runs the statements on experiments, trials, allocations and what
// trials report, either directly (through DB) or inside InTx.
type Queries struct{ q *gen.Queries }

// InTx runs fn in one transaction, committed when fn returns nil.
func (db *DB) InTx(ctx context.Context, fn func(q *Queries) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return fn(&Queries{q: db.q.WithTx(tx)})
	})
}

// Open connects to the database at url, applies the embedded migrations and
// returns the DB. It refuses a database whose schema is newer than this build.
func Open(ctx context.Context, url string, logger *slog.Logger) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database address: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := migrate(ctx, pool, logger); err != nil {
		pool.Close()
		return nil, err
	}
	q := gen.New(pool)
	return &DB{Queries: Queries{q: q}, pool: pool, q: q}, nil
}

// Conns returns the pool's connections: acquired (in use), idle, all of
// them, and the most it opens.
func (db *DB) Conns() (acquired, idle, total, max int32) {
	st := db.pool.Stat()
	return st.AcquiredConns(), st.IdleConns(), st.TotalConns(), st.MaxConns()
}

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// Connect opens a connection of its own, outside the pool and with the
// pool's settings, for work that holds one for long, such as LISTEN. The
// caller closes it.
func (db *DB) Connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return conn, nil
}

// Ping checks the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// migrate applies the embedded migrations under a session lock, so several
// masters (or test processes) never migrate the same database at once.
func migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	provider, err := newProvider(sqlDB)
	if err != nil {
		return err
	}
	current, err := provider.GetDBVersion(ctx)
	if err != nil && !errors.Is(err, goose.ErrVersionNotFound) {
		return fmt.Errorf("read schema version: %w", err)
	}
	sources := provider.ListSources()
	newest := sources[len(sources)-1].Version
	if current > newest {
		return fmt.Errorf("the database schema is at version %d but this Resolute knows versions up to %d: "+
			"it was used by a newer Resolute; run that version, or point db at another database", current, newest)
	}
	start := time.Now()
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	if len(results) > 0 {
		logger.Info("applied database migrations", "count", len(results), "version", newest, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// newProvider reads the embedded migrations for the database behind sqlDB.
func newProvider(sqlDB *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub, goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return provider, nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func (db *DB) inTx(ctx context.Context, fn func(q *gen.Queries) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return fn(db.q.WithTx(tx))
	})
}

// translate turns pgx errors into resolute errors with what as the subject,
// e.g. translate(err, "project %d", id).
func translate(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return resolute.Errorf(resolute.ENotFound, "%s not found", what)
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		return resolute.Errorf(resolute.EConflict, "%s already exists", what)
	case errors.As(err, &pgErr) && pgErr.Code == "23503":
		return resolute.Errorf(resolute.EConflict, "%s is still in use", what)
	case errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05"):
		// A NUL in text or \u0000 in JSON that no check before caught.
		return resolute.Errorf(resolute.EInvalid, "%s: text must not contain NUL characters", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}
