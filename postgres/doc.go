// Package postgres runs a private PostgreSQL server from the binaries installed
// on this machine, for the master's embedded database and for tests.
//
// It owns one directory, <dir>: data/ (initdb on first start), run/ (the unix
// socket; there is no TCP listener) and server.log, all private to the
// server's user (mode 0700): the `postgres` user when we run as root, for
// PostgreSQL refuses to run as root, else ourselves. When <dir>'s path is too
// long for a socket's (the kernel takes 107 bytes) the socket is in a new
// directory of /tmp instead, made at every start with a name nobody can guess
// (so nobody can make it first), private to the server's user, and removed by
// Stop; nothing needs it to stay the same across starts (the master connects
// by the URL Start gives, and a server of an earlier run is found by
// data/postmaster.pid).
//
// Only the master gets in. At every start, before the server listens, the
// superuser's password is set (in single-user mode, as a SCRAM verifier) to
// the random one kept in <dir>.password, the master's file (mode 0600) beside
// the directory, where the postgres user can neither read it nor put a link
// in its place; and pg_hba.conf is rewritten to allow nothing but that
// password on the socket. A directory made by an earlier Resolute with
// --auth=trust is so upgraded in place, data and all; a password an earlier
// Resolute kept in <dir>/password is moved out.
//
// <dir> is the postgres user's, and the master runs as root: whoever gets
// that user's rights (any database superuser, through COPY ... TO PROGRAM)
// can fill it with links and FIFOs. So the master reaches into it only
// through an os.Root on it, reads and writes only regular files with one
// name, creates files with O_EXCL, and changes owners and modes on
// descriptors, never by path (files.go).
//
// Run supervises the server: when the postmaster dies it is started again,
// with backoff, and Down says meanwhile why it is down. A start waits (a
// minute at most) for a postmaster of an earlier run that still holds the
// directory, as after the master was killed.
//
// It knows nothing of Resolute's schema; package db does.
package postgres
