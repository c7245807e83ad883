// Package handlers is Resolute's HTTP surface: every route is in routes.go,
// pages (templ views), the JSON API under /api/v1, and the middleware that
// authenticates, limits bodies and guards against cross-site posts.
//
// Handlers are thin: parse the request, call db (later control), pick a view
// or a JSON body. Error codes become HTTP statuses in one place (errors.go).
package handlers
