// Package client is a typed Go client of Resolute's JSON API under /api/v1,
// used by the det CLI and by tests.
//
// It owns the HTTP details: paths, bearer tokens, timeouts and turning the
// server's {"error": {"code", "message"}} bodies back into *resolute.Error.
// It must not hold CLI concerns (token files, prompts, output formats).
package client
