// Package db owns Resolute's PostgreSQL schema and every SQL statement.
//
// migrations/ holds the goose migrations (embedded, applied at start),
// queries/ the sqlc queries, gen/ the code sqlc generates from them
// (configured by sqlc.yaml at the repository root: `make generate`). The
// wrappers in this package own transactions and turn database errors into
// resolute.Error values: no rows → not_found, unique violations → conflict.
// Nothing outside db imports pgx or gen.
package db
