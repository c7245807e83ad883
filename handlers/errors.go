package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// statusOf is the one place where error codes become HTTP statuses.
func statusOf(code string) int {
	switch code {
	case resolute.EInvalid:
		return http.StatusBadRequest
	case resolute.EUnprocessable:
		return http.StatusUnprocessableEntity
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
	case resolute.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case resolute.ETooMany:
		return http.StatusTooManyRequests
	case resolute.EUnavailable:
		return http.StatusServiceUnavailable
	case resolute.ETimeout:
		return http.StatusRequestTimeout
	}
	return http.StatusInternalServerError
}

// isAPI says whether a request wants JSON rather than a page: the API's,
// and calls to the master's old /proxy/ paths that are not a browser's page
// loads (Jupyter's own requests, scripts).
func isAPI(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/proxy/") {
		return !strings.Contains(r.Header.Get("Accept"), "text/html")
	}
	return strings.HasPrefix(r.URL.Path, "/api/")
}

// error answers with err: JSON for the API, an error page otherwise.
// Internal errors are logged here, once, and shown as "internal error". An
// unreachable database is a 503 that asks to try again, unlogged: the
// outage is logged once where it is handled, not once per request.
func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	var later retryLater
	if resolute.ErrorCode(err) == resolute.EInternal && db.Unavailable(err) {
		err = resolute.Errorf(resolute.EUnavailable, "the database is unavailable; try again shortly")
		w.Header().Set("Retry-After", "1")
	} else if errors.As(err, &later) {
		w.Header().Set("Retry-After", strconv.Itoa(int(later.after/time.Second)))
	}
	code, msg := resolute.ErrorCode(err), resolute.ErrorMessage(err)
	if code == resolute.EInternal {
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	status := statusOf(code)
	if isAPI(r) {
		writeJSON(w, status, resolute.ErrorResponse{Error: resolute.ErrorBody{Code: code, Message: msg}})
		return
	}
	u, signedIn := userFrom(r)
	page := views.ErrorPage{Shell: s.shell(r, http.StatusText(status), ""), SignedIn: signedIn, Status: status, Message: msg}
	page.Shell.User = u
	s.render(w, r, status, views.ErrorView(page))
}

// retryLater is an error whose answer asks the client to send the request
// again after a while (Retry-After).
type retryLater struct {
	error
	after time.Duration
}

func (e retryLater) Unwrap() error { return e.error }

// handleNotFound serves unknown routes: a JSON 404 under /api, else a page.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.error(w, r, resolute.Errorf(resolute.ENotFound, "no page at %s", r.URL.Path))
}

// handleMethodNotAllowed serves known routes called with the wrong method.
func (s *Server) handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	if isAPI(r) {
		writeJSON(w, http.StatusMethodNotAllowed, resolute.ErrorResponse{Error: resolute.ErrorBody{
			Code: "method_not_allowed", Message: r.Method + " is not allowed on " + r.URL.Path}})
		return
	}
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// decodeJSON reads a JSON body into v by the API's rule for field names
// (jsonnames.go: either spelling, camelCase or snake_case); bad JSON
// becomes a 400 that says where, a too-large body a 413, a NUL in any
// text a 400 naming the field. As encoding/json's Decoder, it decodes the
// first JSON value of the body and ignores what follows.
func decodeJSON(r *http.Request, v any) error {
	n := namesOf(reflect.TypeOf(v))
	if n == nil || !n.renames {
		return checkDecoded(v, json.NewDecoder(r.Body).Decode(v))
	}
	// The body is read whole (limitBodies bounds it): a Decoder reading
	// into a json.RawMessage first would cost a quarter of a metrics
	// report's decoding (BenchmarkDecodeMetricsReport).
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	value, end, err := renameFirst(data, n)
	switch {
	case err != nil:
		return err
	case end < 0: // not JSON the rule can read: encoding/json says why, as it always did
		return checkDecoded(v, json.NewDecoder(bytes.NewReader(data)).Decode(v))
	}
	return checkDecoded(v, json.Unmarshal(value, v))
}

// checkDecoded is jsonError of err, or, when v was decoded, a 400 naming a
// field of v that holds a NUL (PostgreSQL refuses them in text).
func checkDecoded(v any, err error) error {
	if err != nil {
		return jsonError(err)
	}
	if field := nulField(v); field != "" {
		return errNUL(field)
	}
	return nil
}

// jsonError turns an error of decoding JSON into a resolute error a person
// can act on; nil stays nil, and resolute errors stay what they are.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	var known *resolute.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &known):
		return known
	case errors.As(err, &tooBig):
		return resolute.Errorf(resolute.ETooLarge, "request body is larger than %d bytes", tooBig.Limit)
	case errors.Is(err, io.EOF):
		return resolute.Errorf(resolute.EInvalid, "request body is empty; expected JSON")
	case errors.As(err, &syntax):
		return resolute.Errorf(resolute.EInvalid, "malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typeErr):
		return resolute.Errorf(resolute.EInvalid, "%s: expected %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return resolute.Errorf(resolute.EInvalid, "malformed JSON: unexpected end of body")
	}
	return resolute.Errorf(resolute.EInvalid, "malformed JSON: %v", err)
}

// parseForm parses a form body, turning a too-large body into a 413.
func parseForm(r *http.Request) error {
	err := r.ParseForm()
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return resolute.Errorf(resolute.ETooLarge, "form is larger than %d bytes", tooBig.Limit)
	} else if err != nil {
		return resolute.Errorf(resolute.EInvalid, "malformed form: %v", err)
	}
	return nil
}

// idParam reads the integer URL parameter name.
func idParam(r *http.Request, name string) (int64, error) {
	return positiveID(name, chi.URLParam(r, name))
}

// idAndJSON reads the {id} of the path, then the JSON body into v: how
// the API's changes to one object begin.
func idAndJSON(r *http.Request, v any) (int64, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return 0, err
	}
	return id, decodeJSON(r, v)
}

// idAndForm reads the {id} of the path, then the posted form: how the
// pages' forms about one object begin.
func idAndForm(r *http.Request) (int64, error) {
	id, err := idParam(r, "id")
	if err == nil {
		err = parseForm(r)
	}
	return id, err
}

// apiByID runs fn with the {id} of the path and answers {} or the error:
// the shape of every API action on one object (archive, delete...).
func (s *Server) apiByID(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context, id int64) error) {
	id, err := idParam(r, "id")
	if err == nil {
		err = fn(r.Context(), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// formByID runs fn with the {id} of the path for a form post: on success it
// redirects to done(id) with message; a conflict (the rule that refused it)
// goes back to back(id) as an error message.
func (s *Server) formByID(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context, id int64) error,
	back, done func(id int64) string, message string) {
	id, err := idParam(r, "id")
	if err == nil {
		err = fn(r.Context(), id)
	}
	if resolute.ErrorCode(err) == resolute.EConflict {
		redirect(w, r, back(id), "error", resolute.ErrorMessage(err))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, done(id), "ok", message)
}

// fieldMessage strips the "field: " prefix from a validation message for
// display next to the field.
func fieldMessage(err error) string {
	msg := resolute.ErrorMessage(err)
	if i := strings.Index(msg, ": "); i > 0 && !strings.Contains(msg[:i], " ") {
		return msg[i+2:]
	}
	return msg
}

// pageFields are the API's field names as a page names them.
var pageFields = map[string]string{"priority": "Priority", "weight": "Weight", "slots": "Slots", "name": "Name", "description": "Description"}

// sentence makes a service's message read as a sentence on a page: a leading
// API field ("priority: must be …") becomes its name in words ("Priority
// must be …") or goes when the rest says it all ("jobId: there is no job …"),
// the first letter is a capital and it ends with a full stop.
func sentence(msg string) string {
	if field, rest, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(field, " \"") {
		if name, known := pageFields[field]; known {
			msg = name + " " + rest
		} else {
			msg = rest
		}
	}
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") && !strings.HasSuffix(msg, "!") {
		msg += "."
	}
	return msg
}
