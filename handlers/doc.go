// Package handlers is Resolute's HTTP surface: every route is in routes.go,
// pages (templ views), the JSON API under /api/v1, and the middleware that
// authenticates, limits bodies and guards against cross-site posts. It
// serves two origins: the master's (Handler, Routes) and the task origin
// (TaskHandler, TaskRoutes), where what tasks serve is proxied with a cookie
// of its own and never with the master's session (proxy.go).
//
// Handlers are thin: parse the request, call db (later control), pick a view
// or a JSON body. Error codes become HTTP statuses in one place (errors.go).
package handlers
