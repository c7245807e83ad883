package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/views"
)

// handleComparePage serves GET /compare?experiments=1,2[&experiments=3][&all=1]:
// the experiments' metric over every trial in one chart, and a table of
// them side by side with the config keys that differ.
func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	ids, err := compareIDs(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	exps, err := s.compareExperiments(r, ids)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p := views.ComparePage{Shell: s.shell(r, "Compare experiments", "experiments")}
	var configs []json.RawMessage
	for _, e := range exps {
		c := views.CompareColumn{Experiment: e, Searcher: searcherName(e.Config)}
		c.Metric, c.SmallerIsBetter = searcherMetric(e.Config)
		p.Columns = append(p.Columns, c)
		configs = append(configs, e.Config)
	}
	p.All, p.Query = r.URL.Query().Get("all") != "", strings.TrimPrefix(comparePath(ids), "/compare?")
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
// field experiments, as GET /compare takes it): one TensorBoard over every
// compared experiment, in the first one's project, then its task page.
func (s *Server) handleCompareTensorBoardForm(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "malformed form: %v", err))
		return
	}
	ids, err := compareIDs(r.PostForm)
	var exps []resolute.Experiment
	if err == nil {
		exps, err = s.compareExperiments(r, ids)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	me, _ := userFrom(r)
	t, err := s.exps.CreateTask(r.Context(), control.TaskRequest{Type: resolute.TaskTensorBoard, ExperimentIDs: ids,
		ProjectID: exps[0].ProjectID, UserID: me.ID})
	if err != nil {
		s.taskFormDone(w, r, err, comparePath(ids), "")
		return
	}
	redirect(w, r, taskPagePath(t.ID), "ok", "Launched "+t.ID+"; it opens once TensorBoard is ready.")
}

// compareIDs reads the experiments to compare: repeated experiments
// fields, each one ID or a comma list; at least two, each once.
func compareIDs(q url.Values) ([]int64, error) {
	var ids []int64
	for _, v := range q["experiments"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil || id <= 0 {
				return nil, resolute.Errorf(resolute.EInvalid, "experiments: %q is not an experiment ID", f)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) < 2 {
		return nil, resolute.Errorf(resolute.EInvalid, "experiments: choose at least two experiments to compare, got %d", len(ids))
	}
	return ids, nil
}

// compareExperiments loads the experiments; an unknown one is not_found,
// naming it.
func (s *Server) compareExperiments(r *http.Request, ids []int64) ([]resolute.Experiment, error) {
	var exps []resolute.Experiment
	for _, id := range ids {
		e, err := s.db.Experiment(r.Context(), id)
		if err != nil {
			return nil, err
		}
		exps = append(exps, e)
	}
	return exps, nil
}

func comparePath(ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, itoa(id))
	}
	return "/compare?experiments=" + strings.Join(s, ",")
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
