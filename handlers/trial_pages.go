package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// logSettle is how long after a trial ends its last log lines may still
// arrive; until then the log keeps being followed.
const logSettle = 5 * time.Second

// handleTrialPage serves GET /trials/{id}[?level=&search=].
func (s *Server) handleTrialPage(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var e resolute.Experiment
	if err == nil {
		e, err = s.db.Experiment(r.Context(), t.ExperimentID)
	}
	p := views.TrialPage{Shell: s.shell(r, "Trial "+itoa(t.ID), "experiments"), Experiment: e}
	p.Shell.Crumbs = append(experimentCrumbs(e), views.Crumb{Label: "Experiment " + itoa(e.ID), Href: "/experiments/" + itoa(e.ID)})
	if err == nil {
		p.Live, err = s.trialLive(r, t, e)
	}
	if err == nil {
		p.Logs, err = s.trialLogs(r, t, "/trials/"+itoa(t.ID), 0)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.TrialView(p))
}

// handleTrialLive serves GET /trials/{id}/live: the htmx fragment of the
// trial's state, metrics, checkpoints and runs.
func (s *Server) handleTrialLive(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var e resolute.Experiment
	if err == nil {
		e, err = s.db.Experiment(r.Context(), t.ExperimentID)
	}
	var l views.TrialLive
	if err == nil {
		l, err = s.trialLive(r, t, e)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TrialLiveView(l))
}

// handleTrialLogLines serves GET /trials/{id}/logs/lines?after=N[&level=
// &search=]: the htmx fragment of the lines after N.
func (s *Server) handleTrialLogLines(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || after < 0 {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "after: expected an integer"))
		return
	}
	l, err := s.trialLogs(r, t, "", after)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TrialLogLines(l))
}

// handleTrialLogDownload serves GET /trials/{id}/logs/download[?level=
// &search=]: the trial's lines under the filter, as a text file.
func (s *Server) handleTrialLogDownload(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var f db.LogFilter
	if err == nil {
		f, err = logFilter(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	read := func(f db.LogFilter) ([]resolute.TaskLog, error) { return s.db.TaskLogs(r.Context(), t.TaskID(), f) }
	s.downloadLogs(w, "trial-"+itoa(t.ID)+"-logs.txt", f, read, nil)
}

func (s *Server) trialLive(r *http.Request, t resolute.Trial, e resolute.Experiment) (views.TrialLive, error) {
	l := views.TrialLive{Trial: t, Hparams: hparamRows(t.Hparams)}
	l.Metric, _ = searcherMetric(e.Config)
	validation, err := s.db.TrialMetrics(r.Context(), t.ID, "validation")
	if err != nil {
		return l, err
	}
	training, err := s.db.TrialMetrics(r.Context(), t.ID, "training")
	if err != nil {
		return l, err
	}
	if len(training) > 20 {
		training = training[len(training)-20:]
	}
	l.Validation, l.Training = metricsTable("validation", validation), metricsTable("training", training)
	cps, err := s.db.TrialCheckpoints(r.Context(), t.ID)
	if err == nil {
		cps, err = s.withValidation(r, cps)
	}
	if err != nil {
		return l, err
	}
	l.Checkpoints = checkpointRows(cps, l.Metric)
	if l.Register, err = s.markRegistered(r, l.Checkpoints); err != nil {
		return l, err
	}
	if s.charting() {
		if l.Charts, err = s.trialCharts(r, t, l.Metric); err != nil {
			return l, err
		}
		if l.System, err = s.systemCharts(r, t, e); err != nil {
			return l, err
		}
	}
	if l.Metadata, err = s.runMetadata(r, t); err != nil {
		return l, err
	}
	l.Allocations, err = s.db.TrialAllocations(r.Context(), t.ID)
	return l, err
}

// trialLogs loads a trial's log lines after a line id under the request's
// level and search filter. The log is done when the trial ended a while ago
// and no lines are left.
func (s *Server) trialLogs(r *http.Request, t resolute.Trial, action string, after int64) (views.TrialLogs, error) {
	q := r.URL.Query()
	l := views.TrialLogs{TrialID: t.ID, After: after, Level: strings.ToUpper(q.Get("level")), Search: q.Get("search"), Action: action}
	if !slices.Contains(views.LogLevels, l.Level) {
		l.Level = ""
	}
	const limit = 1000
	lines, err := s.db.TaskLogs(r.Context(), t.TaskID(), db.LogFilter{After: after, Level: l.Level, Search: l.Search, Limit: limit})
	if err != nil {
		return l, err
	}
	for _, line := range lines {
		l.Lines = append(l.Lines, logLineView(line))
		l.After = line.ID
	}
	settled := t.EndedAt != nil && s.now().Sub(*t.EndedAt) > logSettle
	l.Done = resolute.Terminal(t.State) && settled && len(lines) < limit
	return l, nil
}

// metricsTable lays reports out as rows with one column per metric name.
func metricsTable(group string, reports []resolute.MetricsReport) views.MetricsTable {
	m := views.MetricsTable{Group: group}
	values := make([]map[string]json.RawMessage, len(reports))
	for i, rep := range reports {
		values[i] = avgMetrics(rep.Metrics)
		for k := range values[i] {
			if !slices.Contains(m.Columns, k) {
				m.Columns = append(m.Columns, k)
			}
		}
	}
	slices.Sort(m.Columns)
	for i, rep := range reports {
		row := views.MetricsRow{Steps: rep.StepsCompleted, Time: rep.ReportedAt.Local().Format("15:04:05")}
		for _, c := range m.Columns {
			row.Values = append(row.Values, metricText(values[i][c]))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// metricText shows a number with six significant digits and anything else
// as compact JSON; "" when absent.
func metricText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	return compactJSON(raw)
}

// avgMetrics reads a stored report's metrics by name: {"avg_metrics": {...},
// "batch_metrics": [...]} as the task API stores them.
func avgMetrics(raw json.RawMessage) map[string]json.RawMessage {
	var m struct {
		Avg map[string]json.RawMessage `json:"avg_metrics"`
	}
	json.Unmarshal(raw, &m)
	return m.Avg
}

func checkpointRows(cps []resolute.Checkpoint, metric string) []views.CheckpointRow {
	rows := make([]views.CheckpointRow, len(cps))
	for i, c := range cps {
		rows[i] = views.CheckpointRow{Checkpoint: c, Size: byteSize(c.Size)}
		rows[i].Validation = metricText(avgMetrics(c.Validation)[metric])
	}
	return rows
}

func hparamRows(raw json.RawMessage) [][2]string {
	var hp map[string]json.RawMessage
	json.Unmarshal(raw, &hp)
	rows := make([][2]string, 0, len(hp))
	for k, v := range hp {
		rows = append(rows, [2]string{k, compactJSON(v)})
	}
	slices.SortFunc(rows, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return rows
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// jsonToYAML shows a JSON document as block YAML, keeping its key order.
func jsonToYAML(raw json.RawMessage) (string, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("reading the config: %w", err)
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return "", fmt.Errorf("writing the config: %w", err)
	}
	return out.String(), nil
}

// duration is how long something ran: until it ended, or until now.
func (s *Server) duration(start time.Time, end *time.Time) string {
	stop := s.now()
	if end != nil {
		stop = *end
	}
	return stop.Sub(start).Round(time.Second).String()
}

func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTP"[exp]) + "iB"
}
