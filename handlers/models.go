package handlers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// The model registry API, under /api/v1/models, following Determined's paths.

var aliasPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// checkMetadata insists on a JSON object.
func checkMetadata(field string, m *json.RawMessage) error {
	if m == nil {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(*m, &obj); err != nil || obj == nil {
		return resolute.Errorf(resolute.EInvalid, "%s: expected a JSON object", field)
	}
	return nil
}

// modelParam loads the model of {name}.
func (s *Server) modelParam(r *http.Request) (resolute.Model, error) {
	return s.db.Model(r.Context(), chi.URLParam(r, "name"))
}

// mayChangeModel lets the owner and administrators change a model.
func mayChangeModel(r *http.Request, m resolute.Model) error {
	if me, _ := userFrom(r); me.Admin || me.ID == m.UserID {
		return nil
	}
	return resolute.Errorf(resolute.EForbidden, "model %q belongs to %s; only they or an administrator may change it", m.Name, m.Username)
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
	list, err := s.db.Models(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelsResponse{Models: list})
}

// createModel validates and adds a model.
func (s *Server) createModel(r *http.Request, req resolute.ModelRequest) (resolute.Model, error) {
	if req.Name == nil {
		return resolute.Model{}, resolute.Errorf(resolute.EInvalid, "name: is required")
	}
	if err := control.CheckName("name", *req.Name, control.MaxNameLen); err != nil {
		return resolute.Model{}, err
	}
	if strings.ContainsAny(*req.Name, "@/") {
		return resolute.Model{}, resolute.Errorf(resolute.EInvalid, "name: must not contain '@' or '/'")
	}
	if err := checkMetadata("metadata", req.Metadata); err != nil {
		return resolute.Model{}, err
	}
	me, _ := userFrom(r)
	m := resolute.Model{Name: *req.Name, WorkspaceID: req.WorkspaceID, UserID: me.ID}
	if m.WorkspaceID == 0 {
		ws, err := s.db.WorkspaceByName(r.Context(), resolute.DefaultWorkspaceName)
		if err != nil {
			return m, err
		}
		m.WorkspaceID = ws.ID
	} else if _, err := s.db.Workspace(r.Context(), m.WorkspaceID); err != nil {
		return m, err
	}
	applyModel(&m, req)
	return s.db.CreateModel(r.Context(), m)
}

func applyModel(m *resolute.Model, req resolute.ModelRequest) {
	if req.Description != nil {
		m.Description = *req.Description
	}
	if req.Metadata != nil {
		m.Metadata = *req.Metadata
	}
	if req.Labels != nil {
		m.Labels = *req.Labels
	}
	if req.Notes != nil {
		m.Notes = *req.Notes
	}
}

// handleAPIModelCreate serves POST /api/v1/models.
func (s *Server) handleAPIModelCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.ModelRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	m, err := s.createModel(r, req)
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
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ModelResponse{Model: m})
}

// editModel applies a PATCH to a model.
func (s *Server) editModel(r *http.Request, m resolute.Model, req resolute.ModelRequest) (resolute.Model, error) {
	if err := mayChangeModel(r, m); err != nil {
		return m, err
	}
	if req.Name != nil {
		if err := control.CheckName("name", *req.Name, control.MaxNameLen); err != nil {
			return m, err
		}
		if strings.ContainsAny(*req.Name, "@/") {
			return m, resolute.Errorf(resolute.EInvalid, "name: must not contain '@' or '/'")
		}
		m.Name = *req.Name
	}
	if err := checkMetadata("metadata", req.Metadata); err != nil {
		return m, err
	}
	applyModel(&m, req)
	if err := s.db.UpdateModel(r.Context(), m); err != nil {
		return m, err
	}
	return s.db.Model(r.Context(), m.Name)
}

// handleAPIModelPatch serves PATCH /api/v1/models/{name}.
func (s *Server) handleAPIModelPatch(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	var req resolute.ModelRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		m, err = s.editModel(r, m, req)
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
	m, err := s.modelParam(r)
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil {
		err = s.db.DeleteModel(r.Context(), m.ID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleAPIModelArchive serves POST /api/v1/models/{name}/archive and /unarchive.
func (s *Server) handleAPIModelArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := s.modelParam(r)
		if err == nil {
			err = mayChangeModel(r, m)
		}
		if err == nil {
			err = s.db.SetModelArchived(r.Context(), m.ID, archived)
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPIModelMove serves POST /api/v1/models/{name}/move.
func (s *Server) handleAPIModelMove(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	var req resolute.MoveModelRequest
	if err == nil {
		err = mayChangeModel(r, m)
	}
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		_, err = s.db.Workspace(r.Context(), req.DestinationWorkspaceID)
	}
	if err == nil {
		err = s.db.MoveModel(r.Context(), m.ID, req.DestinationWorkspaceID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
