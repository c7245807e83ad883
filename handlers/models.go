package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// The model registry API, under /api/v1/models, following Determined's paths.

// modelParam loads the model of {name}.
func (s *Server) modelParam(r *http.Request) (resolute.Model, error) {
	m, err := s.db.Model(r.Context(), chi.URLParam(r, "name"))
	if err != nil {
		return m, err
	}
	return m, readable(r, authz.Model(m))
}

// mayChangeModel says whether the requester may change model m, for pages
// that offer the controls only to those who may.
func mayChangeModel(r *http.Request, m resolute.Model) bool {
	return authz.Can(actorFrom(r), authz.ChangeModel, authz.Model(m)) == nil
}

// handleAPIModelList serves GET /api/v1/models[?name=&labels=&archived=&sort_by=&workspace_id=].
func (s *Server) handleAPIModelList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	archived, err := archivedFilter(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	f := db.ModelFilter{Archived: archived, Search: q.Get("name"), Sort: q.Get("sort_by")}
	for _, l := range q["labels"] {
		f.Labels = append(f.Labels, strings.Split(l, ",")...)
	}
	if v := q.Get("workspace_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "workspace_id: expected an integer, got %q", v))
			return
		}
		f.WorkspaceID = &id
	}
	switch f.Sort {
	case "", "name", "updated", "versions":
	default:
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "sort_by: expected name, updated or versions, got %q", f.Sort))
		return
	}
	f.Viewer = viewer(r, authz.ViewModelRegistry)
	list, err := s.db.Models(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelsResponse{Models: list})
}

// handleAPIModelCreate serves POST /api/v1/models.
func (s *Server) handleAPIModelCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.ModelRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	m, err := s.svc.Models.Create(r.Context(), actorFrom(r), req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelResponse{Model: m})
}

// handleAPIModelGet serves GET /api/v1/models/{name}; NAME@ALIAS answers
// the version the alias points at.
func (s *Server) handleAPIModelGet(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if model, alias, ok := strings.Cut(name, "@"); ok {
		m, err := s.db.Model(r.Context(), model)
		if err == nil {
			err = readable(r, authz.Model(m))
		}
		var v resolute.ModelVersion
		if err == nil {
			v, err = s.db.ModelVersionByAlias(r.Context(), m, alias)
		}
		if err == nil {
			v.Validation, err = s.db.ValidationAtStep(r.Context(), v.TrialID, v.StepsCompleted)
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resolute.ModelVersionResponse{ModelVersion: v})
		return
	}
	m, err := s.db.Model(r.Context(), name)
	if err == nil {
		err = readable(r, authz.Model(m))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelResponse{Model: m})
}

// handleAPIModelPatch serves PATCH /api/v1/models/{name}.
func (s *Server) handleAPIModelPatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.ModelRequest
	err := decodeJSON(r, &req)
	var m resolute.Model
	if err == nil {
		m, err = s.svc.Models.Edit(r.Context(), actorFrom(r), chi.URLParam(r, "name"), req)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelResponse{Model: m})
}

// handleAPIModelDelete serves DELETE /api/v1/models/{name}: the model, its
// versions and aliases (the checkpoints stay).
func (s *Server) handleAPIModelDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := s.svc.Models.Delete(r.Context(), actorFrom(r), chi.URLParam(r, "name")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIModelArchive serves POST /api/v1/models/{name}/archive and /unarchive.
func (s *Server) handleAPIModelArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.svc.Models.SetArchived(r.Context(), actorFrom(r), chi.URLParam(r, "name"), archived); err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPIModelMove serves POST /api/v1/models/{name}/move.
func (s *Server) handleAPIModelMove(w http.ResponseWriter, r *http.Request) {
	var req resolute.MoveModelRequest
	err := decodeJSON(r, &req)
	if err == nil {
		err = s.svc.Models.Move(r.Context(), actorFrom(r), chi.URLParam(r, "name"), req.DestinationWorkspaceID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
