package handlers

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// handleAPIExperimentMetrics serves GET /api/v1/experiments/{id}/metrics?
// metric=M[&group=validation&max_points=N&min_batches=A&max_batches=B&
// after_step=S]: one metric of every trial, each trial's series (within
// batches A..B, for a chart zoomed into them; past step S, what a chart
// lacks) downsampled for a chart N wide from the points each series keeps
// (a zoomed range from its reports; see db.ExperimentSeries), to fewer
// points a trial where there are many trials.
func (s *Server) handleAPIExperimentMetrics(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	series, err := seriesParams(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if series.Metric == "" {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "metric: required"))
		return
	}
	// Many trials get fewer points each: a chart of 1,000 trials at 600
	// points a trial was 50 MB of JSON.
	if series.MaxPoints > 0 && e.NumTrials > 0 {
		series.MaxPoints = min(series.MaxPoints, max(minTrialPoints, maxChartPoints/e.NumTrials))
	}
	trials, err := s.db.ExperimentSeries(r.Context(), e.ID, series)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentMetricsResponse{Trials: trials})
}

// An experiment's chart asks for about maxChartPoints in all, and at least
// minTrialPoints a trial.
const maxChartPoints, minTrialPoints = 30_000, 16

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
// reports it), so that its panel comes first.
func chartOf(e resolute.Experiment, metric string, names map[string][]string) *views.ExperimentChart {
	c := &views.ExperimentChart{ExperimentID: e.ID, Group: "validation", Metric: metric}
	if metric != "" {
		names["validation"] = append([]string{metric}, slices.DeleteFunc(slices.Clone(names["validation"]), func(n string) bool { return n == metric })...)
	}
	for _, g := range []string{"validation", "training"} {
		if len(names[g]) > 0 {
			c.Groups = append(c.Groups, views.MetricNames{Group: g, Names: names[g]})
		}
	}
	return c
}

// seriesParams reads what part of a series a chart asks for: group
// (validation by default), metric, max_points, min_batches and max_batches
// (the part a zoomed chart shows; either may be left out) and after_step
// (only what follows the chart's last point).
func seriesParams(q url.Values) (db.Series, error) {
	s := db.Series{Group: q.Get("group"), Metric: q.Get("metric"), MaxSteps: -1, AfterStep: -1}
	if s.Group == "" {
		s.Group = "validation"
	}
	ints := []struct {
		name string
		dst  *int64
	}{{"min_batches", &s.MinSteps}, {"max_batches", &s.MaxSteps}, {"after_step", &s.AfterStep}}
	for _, p := range ints {
		if q.Get(p.name) == "" {
			continue
		}
		n, err := optInt(q.Get(p.name), p.name)
		if err != nil {
			return db.Series{}, err
		}
		*p.dst = int64(n)
	}
	maxPoints, err := optInt(q.Get("max_points"), "max_points")
	if err != nil {
		return db.Series{}, err
	}
	s.MaxPoints = maxPoints
	if s.MaxSteps >= 0 && s.MaxSteps < s.MinSteps {
		return db.Series{}, resolute.Errorf(resolute.EInvalid, "max_batches: must not be less than min_batches")
	}
	return s, nil
}
