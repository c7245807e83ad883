package handlers

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/views"
)

// handleAPIExperimentMetrics serves GET /api/v1/experiments/{id}/metrics?
// metric=M[&group=validation&max_points=N&min_batches=A&max_batches=B]: one
// metric of every trial, each trial's series (within batches A..B, for a
// chart zoomed into them) downsampled for a chart N wide (see
// control.Downsample).
func (s *Server) handleAPIExperimentMetrics(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	q := r.URL.Query()
	group, metric := q.Get("group"), q.Get("metric")
	if group == "" {
		group = "validation"
	}
	if metric == "" {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "metric: required"))
		return
	}
	maxPoints, err := optInt(q.Get("max_points"), "max_points")
	if err != nil {
		s.error(w, r, err)
		return
	}
	within, err := batchRange(q)
	if err != nil {
		s.error(w, r, err)
		return
	}
	trials, err := s.db.ExperimentMetricSeries(r.Context(), e.ID, group, metric)
	if err != nil {
		s.error(w, r, err)
		return
	}
	for i := range trials {
		trials[i].Points = slices.DeleteFunc(trials[i].Points, func(p resolute.MetricPoint) bool { return !within(p.StepsCompleted) })
		if maxPoints > 0 {
			trials[i].Points = control.DownsamplePoints(trials[i].Points, maxPoints)
		}
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentMetricsResponse{Trials: trials})
}

// charting says whether uPlot is embedded (after `make web`); without it
// pages show their metric tables only.
func (s *Server) charting() bool { return s.assets.Has("vendor/uPlot.iife.min.js") }

// trialCharts is a chart per group the trial reported, training and
// validation always and first.
func (s *Server) trialCharts(r *http.Request, t resolute.Trial, metric string) (*views.TrialCharts, error) {
	reported, err := s.db.TrialMetricGroups(r.Context(), t.ID)
	if err != nil {
		return nil, err
	}
	c := &views.TrialCharts{TrialID: t.ID, Metric: metric, Groups: []string{"training", "validation"}}
	for _, g := range reported {
		if !slices.Contains(c.Groups, g) {
			c.Groups = append(c.Groups, g)
		}
	}
	return c, nil
}

// chartOf is the chart of an experiment offering the metric names by group,
// the searcher's metric on validation first (offered even before any trial
// reports it).
func chartOf(e resolute.Experiment, metric string, names map[string][]string) *views.ExperimentChart {
	c := &views.ExperimentChart{ExperimentID: e.ID, Group: "validation", Metric: metric}
	if metric != "" && !slices.Contains(names["validation"], metric) {
		names["validation"] = append([]string{metric}, names["validation"]...)
	}
	for _, g := range []string{"validation", "training"} {
		if len(names[g]) > 0 {
			c.Groups = append(c.Groups, views.MetricNames{Group: g, Names: names[g]})
		}
	}
	return c
}

// batchRange reads min_batches and max_batches, the part of a series a
// zoomed chart shows; either may be left out.
func batchRange(q url.Values) (func(int64) bool, error) {
	lo, err := optInt(q.Get("min_batches"), "min_batches")
	if err != nil {
		return nil, err
	}
	hi, err := optInt(q.Get("max_batches"), "max_batches")
	if err != nil {
		return nil, err
	}
	if q.Get("max_batches") != "" && hi < lo {
		return nil, resolute.Errorf(resolute.EInvalid, "max_batches: must not be less than min_batches")
	}
	return func(b int64) bool {
		return b >= int64(lo) && (q.Get("max_batches") == "" || b <= int64(hi))
	}, nil
}
