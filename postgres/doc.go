// Package postgres runs a private PostgreSQL server from the binaries installed
// on this machine, for the master's embedded database and for tests.
//
// It owns one directory: data/ (initdb on first start), run/ (the unix
// socket; there is no TCP listener), password and server.log, all private to
// the server's user (mode 0700): the `postgres` user when we run as root, for
// PostgreSQL refuses to run as root, else ourselves.
//
// Only the master gets in. At every start, before the server listens, the
// superuser's password is set (in single-user mode, as a SCRAM verifier) to
// the random one kept in <dir>/password, the master's file (mode 0600), and
// pg_hba.conf is rewritten to allow nothing but that password on the socket.
// A directory made by an earlier Resolute with --auth=trust is so upgraded in
// place, data and all.
//
// Run supervises the server: when the postmaster dies it is started again,
// with backoff, and Down says meanwhile why it is down. A start waits (a
// minute at most) for a postmaster of an earlier run that still holds the
// directory, as after the master was killed.
//
// It knows nothing of Resolute's schema; package db does.
package postgres
