package db

import (
	"context"

	"github.com/jackc/pgx/v5/stdlib"
)

// MigrateDownTo undoes the migrations after version, for tests of what a
// migration does to data stored before it.
func (db *DB) MigrateDownTo(ctx context.Context, version int64) error {
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	provider, err := newProvider(sqlDB)
	if err != nil {
		return err
	}
	_, err = provider.DownTo(ctx, version)
	return err
}

// ExperimentSeriesSQL is the query ExperimentSeries runs on the reports
// (a zoomed or whole series), for a benchmark's EXPLAIN.
const ExperimentSeriesSQL = experimentSeriesSQL

// ExperimentCoarseSQL is the query ExperimentSeries runs on the kept points
// for a chart of many trials; its arguments are KeptArgs'.
const ExperimentCoarseSQL = experimentCoarseSQL

// KeptArgs are the arguments of the queries on the kept points.
func (s Series) KeptArgs(key int64) []any { return []any{key, s.Group, s.Metric, s.AfterStep} }

// Args are the query's arguments for the series of key.
func (s Series) Args(key int64) []any { return s.args(key) }
