// Package postgres runs a private PostgreSQL server from the binaries installed
// on this machine, for the master's embedded database and for tests.
//
// It owns one data directory: initdb on first start, a unix socket only (no
// TCP), the server started as the `postgres` user when we run as root, and a
// clean stop. It knows nothing of Resolute's schema; package db does.
package postgres
