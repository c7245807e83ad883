package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/views"
)

// handleComparePage serves GET /compare?experiments=1,2[&experiments=3][&all=1]
// or ?trials=7,9: the experiments' (or trials') metric over their trials in
// one chart, and a table of them side by side with the config keys (for
// trials, their hyperparameters) that differ.
func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	field, ids, err := compareIDs(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	p := views.ComparePage{Shell: s.shell(r, "Compare "+field, "experiments"), Field: field}
	var configs []json.RawMessage
	if field == "trials" {
		configs, err = s.compareTrials(r, ids, &p)
	} else {
		configs, err = s.compareExperimentColumns(r, ids, &p)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	p.All, p.Query = r.URL.Query().Get("all") != "", strings.TrimPrefix(comparePath(field, ids), "/compare?")
	for _, row := range control.DiffConfigs(configs) {
		if p.All || row.Differ {
			p.Rows = append(p.Rows, row)
		}
	}
	if s.charting() {
		chart, err := s.compareChart(r, p.Columns)
		if err != nil {
			s.error(w, r, err)
			return
		}
		p.Chart = chart
	}
	s.page(w, r, views.CompareView(p))
}

// handleCompareTensorBoardForm serves POST /compare/tensorboard (form
// field experiments or trials, as GET /compare takes them): one TensorBoard
// over every compared experiment or trial, in the first one's project,
// then its task page.
func (s *Server) handleCompareTensorBoardForm(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "malformed form: %v", err))
		return
	}
	field, ids, err := compareIDs(r.PostForm)
	req := control.TaskRequest{Type: resolute.TaskTensorBoard}
	var p views.ComparePage
	if err == nil && field == "trials" {
		req.TrialIDs = ids
		_, err = s.compareTrials(r, ids, &p)
	} else if err == nil {
		req.ExperimentIDs = ids
		_, err = s.compareExperimentColumns(r, ids, &p)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	req.ProjectID = p.Columns[0].Experiment.ProjectID
	s.launchTaskForm(w, r, req, comparePath(field, ids), tensorBoardLaunched)
}

// compareIDs reads what to compare: repeated experiments fields (else
// trials fields), each one ID or a comma list; at least two, each once.
// It returns the field read.
func compareIDs(q url.Values) (string, []int64, error) {
	field := "experiments"
	if len(q["experiments"]) == 0 && len(q["trials"]) > 0 {
		field = "trials"
	}
	var ids []int64
	for _, v := range q[field] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil || id <= 0 {
				return field, nil, resolute.Errorf(resolute.EInvalid, "%s: %q is not an ID", field, f)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) < 2 {
		return field, nil, resolute.Errorf(resolute.EInvalid, "%s: choose at least two %s to compare, got %d", field, field, len(ids))
	}
	return field, ids, nil
}

// compareExperimentColumns loads the experiments into the page's columns
// and returns their configs; an unknown one is not_found, naming it.
func (s *Server) compareExperimentColumns(r *http.Request, ids []int64, p *views.ComparePage) ([]json.RawMessage, error) {
	var configs []json.RawMessage
	for _, id := range ids {
		e, err := s.db.Experiment(r.Context(), id)
		if err == nil {
			err = readable(r, authz.Experiment(e))
		}
		if err != nil {
			return nil, err
		}
		p.Columns = append(p.Columns, compareColumn(e))
		configs = append(configs, resolute.MaskConfig(e.Config))
	}
	return configs, nil
}

// compareTrials loads the trials and their experiments into the page's
// columns and returns each one's config with the trial's hyperparameters
// in place of the search space.
func (s *Server) compareTrials(r *http.Request, ids []int64, p *views.ComparePage) ([]json.RawMessage, error) {
	var configs []json.RawMessage
	for _, id := range ids {
		t, err := s.db.Trial(r.Context(), id)
		if err != nil {
			return nil, err
		}
		e, err := s.db.Experiment(r.Context(), t.ExperimentID)
		if err == nil {
			err = readable(r, authz.Trial(t, e))
		}
		if err != nil {
			return nil, err
		}
		c := compareColumn(e)
		c.Trial = &t
		p.Columns = append(p.Columns, c)
		var config map[string]json.RawMessage
		if err := json.Unmarshal(resolute.MaskConfig(e.Config), &config); err != nil || config == nil {
			config = map[string]json.RawMessage{}
		}
		config["hyperparameters"] = t.Hparams
		b, err := json.Marshal(config)
		if err != nil {
			return nil, fmt.Errorf("trial %d's config: %w", id, err)
		}
		configs = append(configs, b)
	}
	return configs, nil
}

func compareColumn(e resolute.Experiment) views.CompareColumn {
	c := views.CompareColumn{Experiment: e, Searcher: searcherName(e.Config)}
	c.Metric, c.SmallerIsBetter = searcherMetric(e.Config)
	return c
}

func comparePath(field string, ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, itoa(id))
	}
	return "/compare?" + field + "=" + strings.Join(s, ",")
}

// searcherName reads the searcher's name from an expanded config.
func searcherName(config json.RawMessage) string {
	var c struct {
		Searcher struct {
			Name string `json:"name"`
		} `json:"searcher"`
	}
	json.Unmarshal(config, &c)
	return c.Searcher.Name
}

// compareChart offers the metrics any of the experiments' trials reported,
// the first experiment's searcher metric on validation first.
func (s *Server) compareChart(r *http.Request, cols []views.CompareColumn) (*views.ExperimentChart, error) {
	c := &views.ExperimentChart{ExperimentID: cols[0].Experiment.ID, Group: "validation", Metric: cols[0].Metric}
	names := map[string][]string{}
	for _, col := range cols {
		if col.Trial != nil {
			c.TrialIDs = append(c.TrialIDs, col.Trial.ID)
		}
		if slices.Contains(c.ExperimentIDs, col.Experiment.ID) {
			continue
		}
		c.ExperimentIDs = append(c.ExperimentIDs, col.Experiment.ID)
		more, err := s.db.ExperimentMetricNames(r.Context(), col.Experiment.ID)
		if err != nil {
			return nil, err
		}
		if more == nil {
			more = map[string][]string{}
		}
		if col.Metric != "" {
			more["validation"] = append(more["validation"], col.Metric)
		}
		for g, ns := range more {
			for _, n := range ns {
				if !slices.Contains(names[g], n) {
					names[g] = append(names[g], n)
				}
			}
		}
	}
	for _, g := range []string{"validation", "training"} {
		if len(names[g]) > 0 {
			slices.Sort(names[g])
			c.Groups = append(c.Groups, views.MetricNames{Group: g, Names: names[g]})
		}
	}
	return c, nil
}
