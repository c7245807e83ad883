package handlers

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// experimentLogLimit is how many lines the logs tab shows at first (the
// last ones) and a follower gets at once.
const experimentLogLimit = 1000

// handleExperimentLogLines serves GET /experiments/{id}/logs/lines?after=N
// [&level=&search=]: the htmx fragment of every trial's lines after N.
func (s *Server) handleExperimentLogLines(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || after < 0 {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "after: expected a line id (a whole number), got %q", r.URL.Query().Get("after")))
		return
	}
	l, err := s.experimentLogs(r, e, after)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ExperimentLogLines(l))
}

// handleExperimentLogDownload serves GET /experiments/{id}/logs/download
// [?level=&search=]: every trial's lines under the filter, as a text file.
func (s *Server) handleExperimentLogDownload(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	var tasks []string
	var f db.LogFilter
	if err == nil {
		f, err = logFilter(r)
	}
	if err == nil {
		tasks, err = s.trialTasks(r, e)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	read := func(f db.LogFilter) ([]resolute.TaskLog, error) {
		return s.db.ExperimentLogs(r.Context(), tasks, f, false)
	}
	s.downloadLogs(w, "experiment-"+itoa(e.ID)+"-logs.txt", f, read, func(l resolute.TaskLog) string {
		return "[trial " + itoa(trialOfID(l.TaskID)) + "] "
	})
}

// downloadLogs writes a log as a text file, a line per log line (prefixed
// by prefix, when given), reading it a page at a time under f.
func (s *Server) downloadLogs(w http.ResponseWriter, filename string, f db.LogFilter,
	read func(db.LogFilter) ([]resolute.TaskLog, error), prefix func(resolute.TaskLog) string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	out := bufio.NewWriter(w)
	defer out.Flush()
	f.Limit = 5000
	for {
		lines, err := read(f)
		if err != nil {
			// The download has begun; all that is left is to stop it short.
			s.logger.Error("log download", "file", filename, "err", err)
			return
		}
		for _, l := range lines {
			if prefix != nil {
				out.WriteString(prefix(l))
			}
			fmt.Fprintf(out, "%s %s %s\n", l.Time.UTC().Format("2006-01-02T15:04:05.000Z"), l.Level, strings.TrimRight(l.Log, "\r\n"))
			f.After = l.ID
		}
		if len(lines) < f.Limit {
			return
		}
	}
}

// logFilter reads the level and search of a log request.
func logFilter(r *http.Request) (db.LogFilter, error) {
	q := r.URL.Query()
	f := db.LogFilter{Level: strings.ToUpper(q.Get("level")), Search: q.Get("search")}
	if f.Level != "" && !slices.Contains(views.LogLevels, f.Level) {
		return f, resolute.Errorf(resolute.EInvalid, "level: expected one of %s, got %q", strings.Join(views.LogLevels, ", "), q.Get("level"))
	}
	return f, nil
}

// trialTasks are the tasks of an experiment's trials, whose logs are its logs.
func (s *Server) trialTasks(r *http.Request, e resolute.Experiment) ([]string, error) {
	trials, err := s.db.Trials(r.Context(), e.ID)
	if err != nil {
		return nil, err
	}
	tasks := make([]string, len(trials))
	for i, t := range trials {
		tasks[i] = t.TaskID()
	}
	return tasks, nil
}

// experimentLogs loads every trial's lines after a line id under the
// request's filter; from the start it loads the last lines. The log is done
// when the experiment ended a while ago and no lines are left.
func (s *Server) experimentLogs(r *http.Request, e resolute.Experiment, after int64) (views.ExperimentLogs, error) {
	f, err := logFilter(r)
	l := views.ExperimentLogs{ExperimentID: e.ID, After: after, Level: f.Level, Search: f.Search}
	if err != nil {
		return l, err
	}
	tasks, err := s.trialTasks(r, e)
	if err != nil {
		return l, err
	}
	f.After, f.Limit = after, experimentLogLimit
	lines, err := s.db.ExperimentLogs(r.Context(), tasks, f, true)
	if err != nil {
		return l, err
	}
	for _, line := range lines {
		l.Lines = append(l.Lines, views.ExperimentLogLine{TrialID: trialOfID(line.TaskID), LogLine: views.LogLine{ID: line.ID,
			Time: line.Time.Local().Format("2006-01-02 15:04:05"), Level: line.Level, Message: strings.TrimRight(line.Log, "\r\n")}})
		l.After = max(l.After, line.ID)
	}
	settled := e.EndedAt != nil && s.now().Sub(*e.EndedAt) > logSettle
	l.Done = resolute.Terminal(e.State) && settled && (after == 0 || len(lines) < experimentLogLimit)
	return l, nil
}
