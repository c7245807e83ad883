package handlers

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/markdown"
	"github.com/resolute-ml/resolute/views"
)

// bestTrialsShown is how many trials the overview lists.
const bestTrialsShown = 5

// handleExperimentPage serves GET /experiments/{id}[?tab=]: the header and
// one tab, with the tab's own parameters (trials: sort, order, page, cols,
// brushed; logs: level, search; configuration: continue).
func (s *Server) handleExperimentPage(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	var tab string
	if err == nil {
		tab, err = experimentTab(r)
	}
	var p views.ExperimentPage
	if err == nil {
		p, err = s.experimentPage(r, e, tab)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	// The trials tab has one URL per view: the column chooser's boxes
	// (col=) become cols=, in order.
	if canonical := p.Live.Table.Query.Values().Encode(); tab == "trials" && r.URL.RawQuery != canonical {
		http.Redirect(w, r, p.Live.Table.Query.URL(), http.StatusSeeOther)
		return
	}
	s.page(w, r, views.ExperimentView(p))
}

// experimentTab reads ?tab=, the overview when absent.
func experimentTab(r *http.Request) (string, error) {
	tab := r.URL.Query().Get("tab")
	if tab == "" {
		return views.ExperimentTabs[0].Key, nil
	}
	var keys []string
	for _, t := range views.ExperimentTabs {
		if t.Key == tab {
			return tab, nil
		}
		keys = append(keys, t.Key)
	}
	return "", resolute.Errorf(resolute.EInvalid, "tab: unknown tab %q; the tabs are %s", tab, strings.Join(keys, ", "))
}

// experimentPage loads the header and what the tab shows.
func (s *Server) experimentPage(r *http.Request, e resolute.Experiment, tab string) (views.ExperimentPage, error) {
	title := "Experiment " + itoa(e.ID)
	for _, t := range views.ExperimentTabs[1:] {
		if t.Key == tab {
			title += " · " + t.Label
		}
	}
	p := views.ExperimentPage{Shell: s.shell(r, title, "experiments")}
	p.Shell.Crumbs = experimentCrumbs(e)
	if tab != "overview" {
		p.Shell.Crumbs = append(p.Shell.Crumbs, views.Crumb{Label: "Experiment " + itoa(e.ID), Href: "/experiments/" + itoa(e.ID)})
		p.Shell.Here = strings.TrimPrefix(title, "Experiment "+itoa(e.ID)+" · ")
	}
	var err error
	if p.Live, err = s.experimentLive(r, e, tab, true); err != nil {
		return p, err
	}
	switch tab {
	case "hyperparameters":
		p.HParams, err = s.hparamData(r, e)
		if err == nil && s.charting() && len(p.HParams.Trials) > 0 && len(p.HParams.Varying()) > 0 {
			var names map[string][]string
			if names, err = s.db.ExperimentLatestMetricNames(r.Context(), e.ID); err == nil {
				p.HParams.Chart = chartOf(e, p.Live.Metric, names)
			}
		}
	case "configuration":
		p.Config, err = s.experimentConfig(r, e)
	case "logs":
		var l views.ExperimentLogs
		l, err = s.experimentLogs(r, e, 0)
		p.Logs = &l
	case "notes":
		p.Notes = &views.ExperimentNotes{ExperimentID: e.ID, Source: e.Notes, HTML: markdown.ToHTML(e.Notes), CanChange: p.Live.CanChange}
	}
	return p, err
}

// handleExperimentLive serves GET /experiments/{id}/live[?tab=]: the htmx
// fragment of the experiment's header and the tab's trials, checkpoints
// and metrics.
func (s *Server) handleExperimentLive(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	var tab string
	if err == nil {
		tab, err = experimentTab(r)
	}
	var l views.ExperimentLive
	if err == nil {
		l, err = s.experimentLive(r, e, tab, false)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ExperimentLiveView(l))
}

// experimentLive loads the header and what the tab shows of the run; the
// page offers every metric name in its chart's picker (allNames), a poll only
// those of the trials' latest reports, which charts.js adds to the kept
// picker.
func (s *Server) experimentLive(r *http.Request, e resolute.Experiment, tab string, allNames bool) (views.ExperimentLive, error) {
	l := views.ExperimentLive{Tab: tab, Experiment: e, Duration: s.duration(e.CreatedAt, e.EndedAt), CanChange: authz.Can(actorFrom(r), authz.ChangeExperiment, authz.Experiment(e)) == nil}
	l.Metric, l.SmallerIsBetter = searcherMetric(e.Config)
	l.Edit = s.experimentEdit(e)
	switch tab {
	case "overview":
		if err := s.trialRows(r, &l); err != nil {
			return l, err
		}
	case "trials":
		if err := s.trialsTab(r, &l); err != nil {
			return l, err
		}
	case "checkpoints":
		cps, err := s.db.ExperimentCheckpoints(r.Context(), e.ID)
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
	}
	if tab == "overview" && s.charting() {
		readNames := s.db.ExperimentLatestMetricNames
		if allNames {
			readNames = s.db.ExperimentMetricNames
		}
		names, err := readNames(r.Context(), e.ID)
		if err != nil {
			return l, err
		}
		l.Chart = chartOf(e, l.Metric, names)
	}
	return l, nil
}

// trialRows fills in the overview's trials: the best few and the best
// one's latest metrics.
func (s *Server) trialRows(r *http.Request, l *views.ExperimentLive) error {
	trials, err := s.db.Trials(r.Context(), l.Experiment.ID)
	if err != nil {
		return err
	}
	counts, err := s.db.ExperimentCheckpointCounts(r.Context(), l.Experiment.ID)
	if err != nil {
		return err
	}
	if len(trials) > 0 {
		trials = bestTrials(trials, l.SmallerIsBetter, bestTrialsShown)
		latest, err := s.db.LatestTrialMetrics(r.Context(), trials[0].ID)
		if err != nil {
			return err
		}
		for _, m := range latest {
			t := metricsTable(m.Group, []resolute.MetricsReport{m})
			if l.Experiment.NumTrials > 1 {
				t.Group = "best trial " + itoa(trials[0].ID) + " · " + t.Group
			}
			l.Latest = append(l.Latest, t)
		}
	}
	values := make([]map[string]json.RawMessage, len(trials))
	for i, t := range trials {
		values[i] = flatHparams(t.Hparams)
		for k := range values[i] {
			if !slices.Contains(l.HparamNames, k) {
				l.HparamNames = append(l.HparamNames, k)
			}
		}
	}
	slices.Sort(l.HparamNames)
	for i, t := range trials {
		row := views.TrialRow{Trial: t, Checkpoints: counts[t.ID], Ran: s.ran(t.CreatedAt, t.EndedAt)}
		for _, k := range l.HparamNames {
			row.Values = append(row.Values, hparamText(values[i][k]))
		}
		l.Trials = append(l.Trials, row)
	}
	return nil
}

// bestTrials orders trials by their best validation, best first and those
// without one last, and keeps n.
func bestTrials(trials []resolute.Trial, smallerIsBetter bool, n int) []resolute.Trial {
	trials = slices.Clone(trials)
	slices.SortStableFunc(trials, func(a, b resolute.Trial) int {
		switch {
		case a.BestValidation == nil || b.BestValidation == nil:
			return cmp.Compare(boolInt(a.BestValidation == nil), boolInt(b.BestValidation == nil))
		case smallerIsBetter:
			return cmp.Compare(*a.BestValidation, *b.BestValidation)
		}
		return cmp.Compare(*b.BestValidation, *a.BestValidation)
	})
	return trials[:min(n, len(trials))]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// flatHparams reads a trial's hyperparameters with nested ones named by
// their dotted path, as the config nests them.
func flatHparams(raw json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	var walk func(prefix string, raw json.RawMessage)
	walk = func(prefix string, raw json.RawMessage) {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || (prefix != "" && len(m) == 0) {
			out[prefix] = raw
			return
		}
		for k, v := range m {
			if prefix != "" {
				k = prefix + "." + k
			}
			walk(k, v)
		}
	}
	walk("", raw)
	delete(out, "")
	return out
}

// experimentEdit is what the header edits, as stored.
func (s *Server) experimentEdit(e resolute.Experiment) views.ExperimentEdit {
	ed := views.ExperimentEdit{ExperimentID: e.ID, Labels: e.Labels, Schedulable: !resolute.Terminal(e.State),
		Weight: strconv.FormatFloat(e.Weight, 'g', -1, 64), PriorityOrder: s.priorityOrder(e.ResourcePool)}
	if e.Priority != nil {
		ed.Priority = strconv.Itoa(*e.Priority)
	}
	if e.MaxSlots != nil {
		ed.MaxSlots = strconv.Itoa(*e.MaxSlots)
	}
	return ed
}

// priorityOrder says which way the pool's priorities run: the page never
// leaves it to guess.
func (s *Server) priorityOrder(pool string) string {
	for _, p := range s.queue.Pools() {
		if p.Name == pool {
			return "Pool " + pool + ". " + queueOrder(p.Scheduler)
		}
	}
	return "Pool " + pool + " is not in the master's configuration."
}

// hparamData is each trial that reported the searcher's metric, with its
// hyperparameters.
func (s *Server) hparamData(r *http.Request, e resolute.Experiment) (*views.HParamData, error) {
	d := &views.HParamData{ExperimentID: e.ID, Scatter: s.charting()}
	d.Metric, d.SmallerIsBetter = searcherMetric(e.Config)
	trials, err := s.db.Trials(r.Context(), e.ID)
	if err != nil {
		return nil, err
	}
	values := make([]map[string]json.RawMessage, len(trials))
	for i, t := range trials {
		values[i] = flatHparams(t.Hparams)
		for k := range values[i] {
			if !slices.Contains(d.Names, k) {
				d.Names = append(d.Names, k)
			}
		}
	}
	slices.Sort(d.Names)
	logs := logHparams(e.Config)
	for _, n := range d.Names {
		d.Log = append(d.Log, logs[n])
	}
	for i, t := range trials {
		if t.BestValidation == nil {
			continue
		}
		ht := views.HParamTrial{ID: t.ID, Metric: *t.BestValidation}
		for _, k := range d.Names {
			ht.Values = append(ht.Values, hparamValue(values[i][k]))
		}
		d.Trials = append(d.Trials, ht)
	}
	return d, nil
}

// hparamValue is a number as a float64, nothing as nil, and anything else
// as its text.
func hparamValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch v := v.(type) {
	case float64, string, nil:
		return v
	}
	return compactJSON(raw)
}

// hparamText shows a hyperparameter's value: a string as it is, numbers
// with six significant digits, anything else as compact JSON.
func hparamText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return metricText(raw)
}

// logHparams names the hyperparameters of an expanded config searched on a
// log scale (type: log), nested ones by their dotted path.
func logHparams(config json.RawMessage) map[string]bool {
	var c struct {
		Hyperparameters map[string]json.RawMessage `json:"hyperparameters"`
	}
	json.Unmarshal(config, &c)
	out := map[string]bool{}
	var walk func(prefix string, m map[string]json.RawMessage)
	walk = func(prefix string, m map[string]json.RawMessage) {
		for k, raw := range m {
			var spec map[string]json.RawMessage
			if json.Unmarshal(raw, &spec) != nil {
				continue
			}
			if t, ok := spec["type"]; ok {
				out[prefix+k] = string(t) == `"log"`
			} else {
				walk(prefix+k+".", spec)
			}
		}
	}
	walk("", c.Hyperparameters)
	return out
}

// experimentCrumbs lead from the experiment list through the experiment's
// workspace and project to its pages.
func experimentCrumbs(e resolute.Experiment) []views.Crumb {
	return []views.Crumb{{Label: "Experiments", Href: "/experiments"},
		{Label: e.WorkspaceName, Href: "/workspaces/" + itoa(e.WorkspaceID)},
		{Label: e.ProjectName, Href: "/projects/" + itoa(e.ProjectID)}}
}
