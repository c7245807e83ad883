package handlers

import (
	"net/http"

	"github.com/resolute-ml/resolute"
)

// handleAPIExperimentCreate serves POST /api/v1/experiments. This master
// validates configs (validateOnly); running experiments is not part of it
// yet, and a request to create one says so instead of pretending.
func (s *Server) handleAPIExperimentCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.ExperimentConfigRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if !req.ValidateOnly {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "validateOnly: this master checks experiment configs but does not run experiments yet; send validateOnly: true"))
		return
	}
	cfg, err := s.configs.ExpandExperiment(r.Context(), []byte(req.Config), req.Template, req.Overrides)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ValidateResponse{Config: cfg.Map(), Warnings: nonNil(cfg.Warnings)})
}

// handleAPIPreviewSearch serves POST /api/v1/preview-hp-search: the plan of
// the config's hyperparameter search, or every error in the config.
func (s *Server) handleAPIPreviewSearch(w http.ResponseWriter, r *http.Request) {
	var req resolute.ExperimentConfigRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	cfg, plan, err := s.configs.PreviewSearch(r.Context(), []byte(req.Config), req.Template, req.Overrides)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.PreviewResponse{Plan: plan, Summary: plan.String(), Warnings: nonNil(cfg.Warnings)})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
