package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/resolute-ml/resolute"
)

// retryAfter is how many seconds a client should wait before asking again
// for a task that is starting; the waiting page reloads at the same pace.
const retryAfter = "2"

// wantsHTML says whether the client is a browser asking for a page.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// wantsJSON says whether the client asked for JSON.
func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") || strings.Contains(a, "+json")
}

var waitingPage = template.Must(template.New("waiting").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="` + retryAfter + `">
<title>Task {{.}} is starting…</title>
</head>
<body>
<p id="proxy-waiting">Task {{.}} is starting…</p>
<p>This page reloads every ` + retryAfter + ` seconds and opens the task when it is ready.</p>
</body>
</html>
`))

// starting answers for a task whose service does not answer yet: a page
// that reloads itself for browsers, 503 with Retry-After for other clients.
func (p *Proxy) starting(w http.ResponseWriter, r *http.Request, taskID string) {
	w.Header().Set("Retry-After", retryAfter)
	w.Header().Set("Cache-Control", "no-store")
	if wantsHTML(r) && r.Header.Get("Upgrade") == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		waitingPage.Execute(w, taskID)
		return
	}
	p.fail(w, r, resolute.Errorf(resolute.EUnavailable, "task %s is starting", taskID))
}

// fail answers with err through the caller's error handler, or the proxy's
// own rendering: JSON for clients that accept it, else a small page.
// Internal errors are logged here, once, and shown as "internal error".
func (p *Proxy) fail(w http.ResponseWriter, r *http.Request, err error) {
	if p.onError != nil {
		p.onError(w, r, err)
		return
	}
	code := resolute.ErrorCode(err)
	if code == resolute.EInternal {
		p.logger.Error("proxy request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, r, statusOf(code), code, resolute.ErrorMessage(err), wantsJSON(r))
}

// WriteError answers err with the proxy's small page to browsers that ask
// for a page, and as JSON to every other client (Jupyter's own calls,
// scripts). The caller logs internal errors; they are shown as "internal
// error".
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := resolute.ErrorCode(err)
	writeError(w, r, statusOf(code), code, resolute.ErrorMessage(err), !wantsHTML(r))
}

// statusOf maps error codes to HTTP statuses for the proxy's own rendering;
// with WithErrorHandler the caller's one mapping is used instead.
func statusOf(code string) int {
	switch code {
	case resolute.EInvalid:
		return http.StatusBadRequest
	case resolute.EUnauthorized:
		return http.StatusUnauthorized
	case resolute.EForbidden:
		return http.StatusForbidden
	case resolute.ENotFound:
		return http.StatusNotFound
	case resolute.EConflict:
		return http.StatusConflict
	case resolute.EGone:
		return http.StatusGone
	case resolute.ETooMany:
		return http.StatusTooManyRequests
	case resolute.EUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Status}} {{.Text}}</title></head>
<body>
<h1>{{.Status}} {{.Text}}</h1>
<p id="proxy-error">{{.Message}}</p>
</body>
</html>
`))

// writeError writes status with code and msg as JSON or as a small page.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string, asJSON bool) {
	w.Header().Set("Cache-Control", "no-store")
	if asJSON {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(resolute.ErrorResponse{Error: resolute.ErrorBody{Code: code, Message: msg}})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	errorPage.Execute(w, struct {
		Status        int
		Text, Message string
	}{status, http.StatusText(status), msg})
}

// backendError answers 502 when the task's service could not be reached or
// broke off. The message says what happened without internal addresses; the
// full error is logged once.
func (p *Proxy) backendError(w http.ResponseWriter, r *http.Request, err error) {
	taskID := "?"
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok {
		taskID = rt.taskID
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer.
		p.logger.Debug("proxy client gone", "task", taskID, "path", r.URL.Path)
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	p.logger.Warn("proxy: task service failed", "task", taskID, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, r, http.StatusBadGateway, "bad_gateway", "the service of task "+taskID+" "+describe(err), wantsJSON(r))
}

// describe says in a few words why a service could not be reached.
func describe(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "is not answering (connection refused); it may still be starting or may have stopped"
	case errors.Is(err, syscall.ECONNRESET):
		return "closed the connection"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "did not answer in time"
	}
	return "could not be reached"
}
