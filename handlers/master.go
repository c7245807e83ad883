package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/masterlog"
	"github.com/resolute-ml/resolute/views"
)

// handleHealth serves GET /health: 200 when the database answers, else 503
// saying what is down: {"status": "unavailable", "database": "down" (the
// embedded database died and is being restarted) or "unreachable",
// "detail": ...}.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.databaseDown != nil {
		if why := s.databaseDown(); why != "" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "down", "detail": why})
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable",
			"detail": "the database does not answer"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
}

// handleInfo serves GET /info (no session needed, as Determined's).
func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Master)
}

// handleAPIMaster serves GET /api/v1/master.
func (s *Server) handleAPIMaster(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Master)
}

// handleAPIMasterLogs serves GET /api/v1/master/logs[?limit=N&follow=true]
// (administrators): newline-delimited {"result": LogEntry}, following new
// lines until the client goes away when follow is set.
func (s *Server) handleAPIMasterLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := optInt(q.Get("limit"), "limit")
	if err != nil {
		s.error(w, r, err)
		return
	}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	lines, changed := s.logs.Since(0, limit)
	var after int64
	for {
		for _, l := range lines {
			enc.Encode(map[string]resolute.LogEntry{"result": {ID: l.ID, Timestamp: l.Time, Level: l.Level, Message: l.Message}})
			after = l.ID
		}
		if flusher != nil {
			flusher.Flush()
		}
		if !follow {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
		lines, changed = s.logs.Since(after, 0)
	}
}

func optInt(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "%s: expected a non-negative integer, got %q", name, v)
	}
	return n, nil
}

// handleLogsPage serves GET /logs[?level=&search=] (administrators): the
// last lines of the level and above that contain the search, followed with
// htmx.
func (s *Server) handleLogsPage(w http.ResponseWriter, r *http.Request) {
	f, err := logFilter(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	lines, _ := s.logs.Since(0, 0)
	l := masterLogs(lines, f, 500)
	l.Shell = s.shell(r, "Master logs", "cluster")
	s.page(w, r, views.LogsPage(l))
}

// handleLogLines serves GET /logs/lines?after=N[&level=&search=]: the htmx
// fragment of new lines under the filter.
func (s *Server) handleLogLines(w http.ResponseWriter, r *http.Request) {
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "after: expected an integer"))
		return
	}
	f, err := logFilter(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	lines, _ := s.logs.Since(after, 0)
	l := masterLogs(lines, f, 500)
	l.After = max(l.After, after)
	s.render(w, r, http.StatusOK, views.LogLines(l))
}

// masterLogs is the last limit of lines under f (its level and above, its
// search in any case); After is the last line's id read, shown or not, so
// that following goes on past lines the filter hides.
func masterLogs(lines []masterlog.Line, f db.LogFilter, limit int) views.Logs {
	l := views.Logs{Level: f.Level, Search: f.Search}
	search := strings.ToLower(f.Search)
	var shown []masterlog.Line
	for _, line := range lines {
		l.After = line.ID
		if resolute.LevelAtLeast(line.Level, f.Level) && strings.Contains(strings.ToLower(line.Message), search) {
			shown = append(shown, line)
		}
	}
	if len(shown) > limit {
		shown = shown[len(shown)-limit:]
	}
	l.Lines, _ = logView(shown)
	return l
}

func logView(lines []masterlog.Line) ([]views.LogLine, int64) {
	out := make([]views.LogLine, len(lines))
	var last int64
	for i, l := range lines {
		out[i] = views.LogLine{ID: l.ID, Time: l.Time.Format("2006-01-02 15:04:05"), Level: l.Level, Message: l.Message}
		last = l.ID
	}
	return out, last
}
