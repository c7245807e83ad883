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
			fmt.Fprintf(out, "%s %s %s\n", l.Time.UTC().Format("2006-01-02T15:04:05.000Z"), l.Level, resolute.DisplayLine(l.Log, l.Level))
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

// trialTasks are the tasks of an experiment's trials, whose logs are its
// logs, or with ?trial=ID only that trial's (which must be one of the
// experiment's).
func (s *Server) trialTasks(r *http.Request, e resolute.Experiment) ([]string, error) {
	tasks, _, err := s.experimentLogTasks(r, e)
	return tasks, err
}

// experimentLogTasks is trialTasks and the ids of every trial of e, which
// the logs' trial filter offers.
func (s *Server) experimentLogTasks(r *http.Request, e resolute.Experiment) (tasks []string, ids []int64, err error) {
	trials, err := s.db.Trials(r.Context(), e.ID)
	if err != nil {
		return nil, nil, err
	}
	only, err := logTrial(r)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range trials {
		ids = append(ids, t.ID)
		if only == 0 || t.ID == only {
			tasks = append(tasks, t.TaskID())
		}
	}
	if only != 0 && len(tasks) == 0 {
		return nil, nil, resolute.Errorf(resolute.EInvalid, "trial: experiment %d has no trial %d", e.ID, only)
	}
	return tasks, ids, nil
}

// logTrial reads the trial filter of an experiment's log request: 0 for
// every trial.
func logTrial(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("trial")
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "trial: expected a trial id, got %q", v)
	}
	return id, nil
}

// logLineView is a stored log line as the log views show it: its level
// once (resolute.DisplayLine).
func logLineView(line resolute.TaskLog) views.LogLine {
	return views.LogLine{ID: line.ID, Time: line.Time.Local().Format("2006-01-02 15:04:05"),
		Level: line.Level, Message: resolute.DisplayLine(line.Log, line.Level)}
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
	tasks, ids, err := s.experimentLogTasks(r, e)
	if err != nil {
		return l, err
	}
	l.Trials = ids
	l.Trial, _ = logTrial(r)
	f.After, f.Limit = after, experimentLogLimit
	lines, err := s.db.ExperimentLogs(r.Context(), tasks, f, true)
	if err != nil {
		return l, err
	}
	for _, line := range lines {
		l.Lines = append(l.Lines, views.ExperimentLogLine{TrialID: trialOfID(line.TaskID), LogLine: logLineView(line)})
		l.After = max(l.After, line.ID)
	}
	settled := e.EndedAt != nil && s.now().Sub(*e.EndedAt) > logSettle
	l.Done = resolute.Terminal(e.State) && settled && (after == 0 || len(lines) < experimentLogLimit)
	return l, nil
}
