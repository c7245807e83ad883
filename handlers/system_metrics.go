package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
)

// handleSystemMetricsReport is POST /api/v1/trials/{id}/metrics for a
// system metrics group (cpu, memory, disk, network, gpu): what the
// profiler (core_context.profiler) samples, keyed by agent id and stamped
// with report_time, as Determined's harness posts it.
func (s *Server) handleSystemMetricsReport(w http.ResponseWriter, r *http.Request, id int64, group string, body metricsBody) {
	at := s.now()
	if body.Metrics.ReportTime != nil {
		at = *body.Metrics.ReportTime
	}
	err := s.svc.Trials.ReportSystemMetrics(r.Context(), actorFrom(r), id, body.Metrics.TrialRunID, group, at,
		body.Metrics.Metrics.AvgMetrics)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// serveSystemMetrics is GET /api/v1/trials/{id}/metrics?group=G for a
// system metrics group: each report as the profiler posted it, in time
// order, every run's; with max_points=N at most about N of them, evenly
// spread, the last always kept.
func (s *Server) serveSystemMetrics(w http.ResponseWriter, r *http.Request, t resolute.Trial, group string) {
	maxPoints, err := optInt(r.URL.Query().Get("max_points"), "max_points")
	if err != nil {
		s.error(w, r, err)
		return
	}
	reports, err := s.db.TrialSystemMetrics(r.Context(), t.ID, group)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := resolute.MetricsResponse{Metrics: make([]resolute.MetricsReport, 0, len(reports))}
	stride := 1
	if maxPoints > 0 && len(reports) > maxPoints {
		stride = (len(reports) + maxPoints - 1) / maxPoints
	}
	for i, rep := range reports {
		if (len(reports)-1-i)%stride == 0 { // counted from the last, which is always kept
			out.Metrics = append(out.Metrics, rep.AsMetricsReport())
		}
	}
	writeJSON(w, http.StatusOK, out)
}
