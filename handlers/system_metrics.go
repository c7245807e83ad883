package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
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

// systemCharts is the trial page's system metrics panel: a chart per group
// the trial's profiler reported, and CPU, memory, disk and network from
// the start when its config asks for profiling; nil when neither.
func (s *Server) systemCharts(r *http.Request, t resolute.Trial, e resolute.Experiment) (*views.SystemCharts, error) {
	reported, err := s.db.TrialSystemMetricGroups(r.Context(), t.ID)
	if err != nil {
		return nil, err
	}
	var c struct {
		Profiling struct {
			Enabled bool `json:"enabled"`
		} `json:"profiling"`
	}
	json.Unmarshal(e.Config, &c)
	if len(reported) == 0 && !c.Profiling.Enabled {
		return nil, nil
	}
	out := &views.SystemCharts{TrialID: t.ID}
	for _, g := range resolute.SystemMetricGroups {
		if slices.Contains(reported, g) || (c.Profiling.Enabled && g != "gpu") {
			out.Groups = append(out.Groups, g)
		}
	}
	return out, nil
}

// runMetadata is what the trial set with core_context.train.set_metadata,
// indented; "" when it set none.
func (s *Server) runMetadata(r *http.Request, t resolute.Trial) (string, error) {
	md, err := s.db.RunMetadata(r.Context(), t.ID)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if json.Indent(&b, md, "", "  ") != nil || b.String() == "{}" {
		return "", nil
	}
	return b.String(), nil
}
