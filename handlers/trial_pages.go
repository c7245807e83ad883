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

// handleTrialPage serves GET /trials/{id}[?tab=]: the header and one tab,
// with the tab's own parameters (checkpoints: page; logs: level, search).
func (s *Server) handleTrialPage(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var e resolute.Experiment
	if err == nil {
		e, err = s.db.Experiment(r.Context(), t.ExperimentID)
	}
	var tab string
	if err == nil {
		tab, err = trialTab(r)
	}
	p := views.TrialPage{Experiment: e}
	if err == nil {
		p.Live, err = s.trialLive(r, t, e, tab)
	}
	if err == nil && tab == "logs" {
		var l views.TrialLogs
		l, err = s.trialLogs(r, t, "/trials/"+itoa(t.ID), 0)
		p.Logs = &l
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	title := "Trial " + itoa(t.ID)
	p.Shell = s.shell(r, title, "experiments")
	p.Ports = s.trialPorts(r, t, e)
	p.Shell.Crumbs = append(experimentCrumbs(e), views.Crumb{Label: "Experiment " + itoa(e.ID), Href: "/experiments/" + itoa(e.ID)})
	if tab != views.TrialTabs[0].Key {
		for _, x := range views.TrialTabs {
			if x.Key == tab {
				p.Shell.Title += " · " + x.Label
				p.Shell.Here = x.Label
			}
		}
		p.Shell.Crumbs = append(p.Shell.Crumbs, views.Crumb{Label: title, Href: "/trials/" + itoa(t.ID)})
	}
	s.page(w, r, views.TrialView(p))
}

// trialTab reads ?tab=, the overview when absent.
func trialTab(r *http.Request) (string, error) {
	tab := r.URL.Query().Get("tab")
	if tab == "" {
		return views.TrialTabs[0].Key, nil
	}
	var keys []string
	for _, t := range views.TrialTabs {
		if t.Key == tab {
			return tab, nil
		}
		keys = append(keys, t.Key)
	}
	return "", resolute.Errorf(resolute.EInvalid, "tab: unknown tab %q; the tabs are %s", tab, strings.Join(keys, ", "))
}

// handleTrialLive serves GET /trials/{id}/live[?tab=&page=]: the htmx
// fragment of the trial's header and what its tab shows.
func (s *Server) handleTrialLive(w http.ResponseWriter, r *http.Request) {
	t, err := s.trialParam(r)
	var e resolute.Experiment
	if err == nil {
		e, err = s.db.Experiment(r.Context(), t.ExperimentID)
	}
	var tab string
	if err == nil {
		tab, err = trialTab(r)
	}
	var l views.TrialLive
	if err == nil {
		l, err = s.trialLive(r, t, e, tab)
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

// trialLive loads the header and what the tab shows; only the tab's own
// rows are read, so a tab costs what it shows.
func (s *Server) trialLive(r *http.Request, t resolute.Trial, e resolute.Experiment, tab string) (views.TrialLive, error) {
	l := views.TrialLive{Tab: tab, Trial: t}
	l.Metric, _ = searcherMetric(e.Config)
	var err error
	if s.charting() {
		// The system tab is offered only where there are system metrics.
		if l.System, err = s.systemCharts(r, t, e); err != nil {
			return l, err
		}
	}
	switch tab {
	case "overview":
		err = s.trialOverview(r, &l)
	case "hyperparameters":
		l.Hparams = hparamRows(t.Hparams)
	case "checkpoints":
		err = s.trialCheckpointPage(r, &l)
	case "metadata":
		l.Metadata, err = s.runMetadata(r, t)
	case "system":
		if l.System == nil {
			err = resolute.Errorf(resolute.ENotFound, "trial %d reported no system metrics", t.ID)
		}
	}
	return l, err
}

// trialOverview loads the overview: the charts, the latest reports of
// each group, and the runs.
func (s *Server) trialOverview(r *http.Request, l *views.TrialLive) error {
	const latest = 10
	validation, err := s.db.TrialMetricsTail(r.Context(), l.Trial.ID, "validation", latest)
	if err != nil {
		return err
	}
	training, err := s.db.TrialMetricsTail(r.Context(), l.Trial.ID, "training", latest)
	if err != nil {
		return err
	}
	l.Validation, l.Training = metricsTable("validation", validation), metricsTable("training", training)
	if s.charting() {
		if l.Charts, err = s.trialCharts(r, l.Trial, l.Metric); err != nil {
			return err
		}
	}
	l.Allocations, err = s.db.TrialAllocations(r.Context(), l.Trial.ID)
	return err
}

// trialCheckpointPage loads one page (?page=, from 1) of the trial's
// checkpoints, the latest first.
func (s *Server) trialCheckpointPage(r *http.Request, l *views.TrialLive) error {
	l.Page = 1
	if v := r.URL.Query().Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return resolute.Errorf(resolute.EInvalid, "page: expected a whole number from 1 to 1000000, got %q", v)
		}
		l.Page = n
	}
	cps, total, err := s.db.TrialCheckpointsPage(r.Context(), l.Trial.ID, views.CheckpointsPerPage, (l.Page-1)*views.CheckpointsPerPage)
	if err == nil {
		cps, err = s.withValidation(r, cps)
	}
	if err != nil {
		return err
	}
	l.Total = total
	if l.Page > l.Pages() {
		return resolute.Errorf(resolute.ENotFound, "page %d: trial %d's checkpoints fill %d pages", l.Page, l.Trial.ID, l.Pages())
	}
	l.Checkpoints = checkpointRows(cps, l.Metric)
	l.Register, err = s.markRegistered(r, l.Checkpoints)
	return err
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
	return s.ran(start, end).Round(time.Second).String()
}

// ran is how long something has run: until it ended, or until now.
func (s *Server) ran(start time.Time, end *time.Time) time.Duration {
	stop := s.now()
	if end != nil {
		stop = *end
	}
	return stop.Sub(start)
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
