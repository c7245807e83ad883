package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

// handleAPIExperimentMetrics serves GET /api/v1/experiments/{id}/metrics?
// metric=M[&group=validation&max_points=N]: one metric of every trial, each
// trial's series downsampled for a chart N wide (see control.Downsample).
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
	trials, err := s.db.ExperimentMetricSeries(r.Context(), e.ID, group, metric)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if maxPoints > 0 {
		for i := range trials {
			trials[i].Points = control.DownsamplePoints(trials[i].Points, maxPoints)
		}
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentMetricsResponse{Trials: trials})
}
