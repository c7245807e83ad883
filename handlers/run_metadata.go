package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
)

// handleRunMetadataGet serves GET /api/v1/runs/{id}/metadata: the metadata
// a run (a trial) set, for a signed-in user or the trial's own task.
func (s *Server) handleRunMetadataGet(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	md, err := s.svc.RunMetadata.Get(r.Context(), actorFrom(r), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.RunMetadataResponse{Metadata: md})
}

// handleRunMetadataPost serves POST /api/v1/runs/{id}/metadata
// {"metadata": {...}}: replaces the run's metadata and answers it; the
// trial's own task, the experiment's owner or an administrator.
func (s *Server) handleRunMetadataPost(w http.ResponseWriter, r *http.Request) {
	var req resolute.RunMetadataRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	md, err := s.svc.RunMetadata.Set(r.Context(), actorFrom(r), id, req.Metadata)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.RunMetadataResponse{Metadata: md})
}
