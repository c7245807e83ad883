package handlers

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// handleExperimentMetricsCSV serves GET /experiments/{id}/metrics.csv: every
// report of every trial, one row a report.
func (s *Server) handleExperimentMetricsCSV(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.metricsCSV(w, r, db.MetricsScope{ExperimentID: e.ID}, "experiment-"+itoa(e.ID)+"-metrics.csv")
}

// handleTrialMetricsCSV serves GET /trials/{id}/metrics.csv: every report of
// the trial, one row a report.
func (s *Server) handleTrialMetricsCSV(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.metricsCSV(w, r, db.MetricsScope{TrialID: t.ID}, "trial-"+itoa(t.ID)+"-metrics.csv")
}

// metricsCSV writes the scope's reports as CSV: trial, group, steps, the
// report's time, then a column per metric any report holds (sorted by
// name). A value is written as the API gives it: a number's JSON text
// exactly, a string's text, other JSON as JSON, and nothing where the
// report lacks the metric. Reports hidden by a restart are left out, as
// the API leaves them out.
func (s *Server) metricsCSV(w http.ResponseWriter, r *http.Request, scope db.MetricsScope, filename string) {
	names, err := s.db.MetricNames(r.Context(), scope)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	buf := bufio.NewWriterSize(w, 64<<10)
	out := csv.NewWriter(buf)
	header := []string{"trial", "group", "steps", "reported_at"}
	for _, n := range names {
		header = append(header, noFormula(n))
	}
	out.Write(header)
	row := make([]string, 4+len(names))
	err = s.db.EachMetricsReport(r.Context(), scope, func(m resolute.MetricsReport) error {
		var values map[string]json.RawMessage
		if len(m.Metrics) > 0 {
			json.Unmarshal(m.Metrics, &values) // a report that is not an object has no values
		}
		row[0], row[1], row[2] = itoa(m.TrialID), m.Group, strconv.FormatInt(m.StepsCompleted, 10)
		row[3] = m.ReportedAt.UTC().Format(time.RFC3339Nano)
		for i, n := range names {
			row[4+i] = csvValue(values[n])
		}
		return out.Write(row)
	})
	if err != nil {
		panic(http.ErrAbortHandler) // cut the download short rather than end it as if whole
	}
	out.Flush()
	buf.Flush()
}

// csvValue is a metric's JSON value as a CSV cell.
func csvValue(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return noFormula(s)
	}
	return string(v)
}

// noFormula keeps a spreadsheet from reading text as a formula (a metric
// name or value is the training code's to choose): text that starts as a
// formula does gets a leading apostrophe.
func noFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
