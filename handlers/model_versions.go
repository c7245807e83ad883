package handlers

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
)

// versionParam loads {num} of a model: a number, "latest", or "@alias".
func (s *Server) versionParam(r *http.Request, m resolute.Model) (resolute.ModelVersion, error) {
	num := chi.URLParam(r, "num")
	var v resolute.ModelVersion
	var err error
	switch {
	case num == "latest":
		v, err = s.db.LatestModelVersion(r.Context(), m)
	case len(num) > 1 && num[0] == '@':
		v, err = s.db.ModelVersionByAlias(r.Context(), m, num[1:])
	default:
		n, perr := strconv.Atoi(num)
		if perr != nil || n < 1 {
			return v, resolute.Errorf(resolute.EInvalid, "version: expected a number, latest or @alias, got %q", num)
		}
		v, err = s.db.ModelVersion(r.Context(), m, n)
	}
	if err != nil {
		return v, err
	}
	v.Validation, err = s.db.ValidationAtStep(r.Context(), v.TrialID, v.StepsCompleted)
	return v, err
}

// modelVersionParam loads the model of {name} and its version {num}.
func (s *Server) modelVersionParam(r *http.Request) (resolute.Model, resolute.ModelVersion, error) {
	m, err := s.modelParam(r)
	if err != nil {
		return m, resolute.ModelVersion{}, err
	}
	v, err := s.versionParam(r, m)
	return m, v, err
}

// handleAPIModelVersions serves GET /api/v1/models/{name}/versions.
func (s *Server) handleAPIModelVersions(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	var list []resolute.ModelVersion
	if err == nil {
		list, err = s.db.ModelVersions(r.Context(), m.ID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionsResponse{Model: m, ModelVersions: list})
}

// handleAPIModelVersionCreate serves POST /api/v1/models/{name}/versions.
func (s *Server) handleAPIModelVersionCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.ModelVersionRequest
	err := decodeJSON(r, &req)
	var v resolute.ModelVersion
	if err == nil {
		v, err = s.svc.Models.RegisterVersion(r.Context(), actorFrom(r), chi.URLParam(r, "name"), req)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelVersionGet serves GET /api/v1/models/{name}/versions/{num}
// ({num} may be latest or @alias).
func (s *Server) handleAPIModelVersionGet(w http.ResponseWriter, r *http.Request) {
	_, v, err := s.modelVersionParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelVersionPatch serves PATCH /api/v1/models/{name}/versions/{num}.
func (s *Server) handleAPIModelVersionPatch(w http.ResponseWriter, r *http.Request) {
	m, v, err := s.modelVersionParam(r)
	var req resolute.ModelVersionRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		v, err = s.svc.Models.EditVersion(r.Context(), actorFrom(r), m.Name, v.Version, req)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelVersionDelete serves DELETE /api/v1/models/{name}/versions/{num}.
func (s *Server) handleAPIModelVersionDelete(w http.ResponseWriter, r *http.Request) {
	m, v, err := s.modelVersionParam(r)
	if err == nil {
		_, err = s.svc.Models.DeleteVersion(r.Context(), actorFrom(r), m.Name, v.Version)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIModelVersionMetrics serves GET
// /api/v1/models/{name}/versions/{num}/metrics: the validation metrics of
// the checkpoint's trial.
func (s *Server) handleAPIModelVersionMetrics(w http.ResponseWriter, r *http.Request) {
	_, v, err := s.modelVersionParam(r)
	var list []resolute.MetricsReport
	if err == nil {
		list, err = s.db.TrialMetrics(r.Context(), v.TrialID, "validation")
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if list == nil {
		list = []resolute.MetricsReport{}
	}
	writeJSON(w, http.StatusOK, resolute.MetricsResponse{Metrics: list})
}

// handleAPIModelAliasSet serves PUT /api/v1/models/{name}/aliases/{alias}
// {"version": N}: points (or moves) the alias to version N.
func (s *Server) handleAPIModelAliasSet(w http.ResponseWriter, r *http.Request) {
	var req resolute.AliasRequest
	err := decodeJSON(r, &req)
	var v resolute.ModelVersion
	if err == nil {
		v, err = s.svc.Models.SetAlias(r.Context(), actorFrom(r), chi.URLParam(r, "name"), chi.URLParam(r, "alias"), req.Version)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelAliasDelete serves DELETE /api/v1/models/{name}/aliases/{alias}.
func (s *Server) handleAPIModelAliasDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Models.RemoveAlias(r.Context(), actorFrom(r), chi.URLParam(r, "name"), chi.URLParam(r, "alias")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
