// Package handlers is Resolute's HTTP surface: every route is in routes.go,
// pages (templ views), the JSON API under /api/v1, and the middleware that
// authenticates, limits bodies, refuses NUL characters (nul.go), sets the
// security headers, finds the client behind a trusted proxy and refuses
// changes sent from other origins (security.go). It serves two origins: the
// master's (Handler, Routes) and the task origin (TaskHandler, TaskRoutes),
// where what tasks serve is proxied with a cookie of its own and never with
// the master's session (proxy.go).
//
// Handlers are thin: parse the request, call db (later control), pick a view
// or a JSON body. Error codes become HTTP statuses in one place (errors.go).
// JSON bodies are read in one place too (decodeJSON, decodeJSONUpload), by
// one rule for field names: either spelling, camelCase or snake_case, as
// Determined's grpc-gateway took them (jsonnames.go); never decode a body
// with encoding/json directly.
package handlers
