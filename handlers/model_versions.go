package handlers

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
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

// registerVersion registers a checkpoint as a model's next version.
func (s *Server) registerVersion(r *http.Request, m resolute.Model, req resolute.ModelVersionRequest) (resolute.ModelVersion, error) {
	if err := mayChangeModel(r, m); err != nil {
		return resolute.ModelVersion{}, err
	}
	if !validUUID(req.CheckpointUUID) {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EInvalid, "checkpointUuid: expected a UUID, got %q", req.CheckpointUUID)
	}
	if err := checkMetadata("metadata", req.Metadata); err != nil {
		return resolute.ModelVersion{}, err
	}
	c, err := s.db.Checkpoint(r.Context(), req.CheckpointUUID)
	if err != nil {
		return resolute.ModelVersion{}, err
	}
	if c.State != "COMPLETED" {
		return resolute.ModelVersion{}, resolute.Errorf(resolute.EConflict, "checkpoint %s was deleted; it cannot be registered", c.UUID)
	}
	me, _ := userFrom(r)
	v := resolute.ModelVersion{CheckpointUUID: c.UUID, UserID: me.ID}
	applyVersion(&v, req)
	var out resolute.ModelVersion
	err = s.db.InTx(r.Context(), func(q *db.Queries) error {
		out, err = q.CreateModelVersion(r.Context(), m, v)
		return err
	})
	return out, err
}

func applyVersion(v *resolute.ModelVersion, req resolute.ModelVersionRequest) {
	if req.Name != nil {
		v.Name = *req.Name
	}
	if req.Comment != nil {
		v.Comment = *req.Comment
	}
	if req.Notes != nil {
		v.Notes = *req.Notes
	}
	if req.Metadata != nil {
		v.Metadata = *req.Metadata
	}
	if req.Labels != nil {
		v.Labels = *req.Labels
	}
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
	m, err := s.modelParam(r)
	var req resolute.ModelVersionRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	var v resolute.ModelVersion
	if err == nil {
		v, err = s.registerVersion(r, m, req)
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
	m, err := s.modelParam(r)
	var v resolute.ModelVersion
	if err == nil {
		v, err = s.versionParam(r, m)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelVersionPatch serves PATCH /api/v1/models/{name}/versions/{num}.
func (s *Server) handleAPIModelVersionPatch(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	var v resolute.ModelVersion
	var req resolute.ModelVersionRequest
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil {
		v, err = s.versionParam(r, m)
	}
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		err = checkMetadata("metadata", req.Metadata)
	}
	if err == nil {
		applyVersion(&v, req)
		err = s.db.UpdateModelVersion(r.Context(), v)
	}
	if err == nil {
		v, err = s.db.ModelVersion(r.Context(), m, v.Version)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelVersionDelete serves DELETE /api/v1/models/{name}/versions/{num}.
func (s *Server) handleAPIModelVersionDelete(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	var v resolute.ModelVersion
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil {
		v, err = s.versionParam(r, m)
	}
	if err == nil {
		err = s.db.DeleteModelVersion(r.Context(), v.ID)
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
	m, err := s.modelParam(r)
	var v resolute.ModelVersion
	var list []resolute.MetricsReport
	if err == nil {
		v, err = s.versionParam(r, m)
	}
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
	m, err := s.modelParam(r)
	alias := chi.URLParam(r, "alias")
	var req resolute.AliasRequest
	var v resolute.ModelVersion
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil && !aliasPattern.MatchString(alias) {
		err = resolute.Errorf(resolute.EInvalid, "alias: use a letter then up to 63 letters, digits, '-' or '_', got %q", alias)
	}
	if err == nil && (alias == "latest") {
		err = resolute.Errorf(resolute.EInvalid, "alias: %q is reserved", alias)
	}
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		v, err = s.db.ModelVersion(r.Context(), m, req.Version)
	}
	if err == nil {
		err = s.db.SetModelAlias(r.Context(), m.ID, alias, v.ID)
	}
	if err == nil {
		v, err = s.db.ModelVersion(r.Context(), m, req.Version)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
}

// handleAPIModelAliasDelete serves DELETE /api/v1/models/{name}/aliases/{alias}.
func (s *Server) handleAPIModelAliasDelete(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil {
		err = s.db.DeleteModelAlias(r.Context(), m, chi.URLParam(r, "alias"))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
