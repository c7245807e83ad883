package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/views"
)

// withConfig fills Config, the YAML as an object, for API answers.
// Storage keys are masked, as in experiments' configs.
func withConfig(t resolute.Template) resolute.Template {
	t.ConfigYAML = expconf.MaskYAML(t.ConfigYAML)
	var m map[string]any
	if yaml.Unmarshal([]byte(t.ConfigYAML), &m) == nil {
		t.Config = m
	}
	return t
}

// handleAPITemplateList serves GET /api/v1/templates[?workspace_id=].
func (s *Server) handleAPITemplateList(w http.ResponseWriter, r *http.Request) {
	var ws *int64
	if v := r.URL.Query().Get("workspace_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "workspace_id: expected an integer, got %q", v))
			return
		}
		ws = &id
	}
	list, err := s.db.TemplatesFor(r.Context(), ws, viewer(r, authz.ViewTemplates))
	if err != nil {
		s.error(w, r, err)
		return
	}
	for i := range list {
		list[i] = withConfig(list[i])
	}
	writeJSON(w, http.StatusOK, resolute.TemplatesResponse{Templates: list})
}

// handleAPITemplateGet serves GET /api/v1/templates/{name}.
func (s *Server) handleAPITemplateGet(w http.ResponseWriter, r *http.Request) {
	t, err := s.db.Template(r.Context(), chi.URLParam(r, "name"))
	if err == nil {
		err = readable(r, authz.Template(t))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.TemplateResponse{Template: withConfig(t)})
}

// handleAPITemplateCreate serves POST /api/v1/templates: 409 if it exists.
func (s *Server) handleAPITemplateCreate(w http.ResponseWriter, r *http.Request) {
	s.apiSaveTemplate(w, r, "", s.svc.Templates.Create)
}

// handleAPITemplatePut serves PUT /api/v1/templates/{name}: create or replace.
func (s *Server) handleAPITemplatePut(w http.ResponseWriter, r *http.Request) {
	s.apiSaveTemplate(w, r, chi.URLParam(r, "name"), s.svc.Templates.Set)
}

// handleAPITemplatePatch serves PATCH /api/v1/templates/{name}: replace the
// config of an existing template.
func (s *Server) handleAPITemplatePatch(w http.ResponseWriter, r *http.Request) {
	s.apiSaveTemplate(w, r, chi.URLParam(r, "name"), s.svc.Templates.Update)
}

// templateSaver is a service method that stores a template.
type templateSaver func(context.Context, authz.Actor, resolute.TemplateRequest) (resolute.Template, error)

// apiSaveTemplate decodes a template request, names it after the path (when
// there is one) and saves it with save.
func (s *Server) apiSaveTemplate(w http.ResponseWriter, r *http.Request, name string, save templateSaver) {
	var req resolute.TemplateRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if name != "" {
		if req.Name != "" && req.Name != name {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "name: %q differs from the template in the path, %q", req.Name, name))
			return
		}
		req.Name = name
	}
	t, err := save(r.Context(), actorFrom(r), req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.TemplateResponse{Template: withConfig(t)})
}

// handleAPITemplateDelete serves DELETE /api/v1/templates/{name}.
func (s *Server) handleAPITemplateDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Templates.Delete(r.Context(), actorFrom(r), chi.URLParam(r, "name")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleTemplateListPage serves GET /templates.
func (s *Server) handleTemplateListPage(w http.ResponseWriter, r *http.Request) {
	s.renderTemplateList(w, r, http.StatusOK, views.TemplateForm{})
}

func (s *Server) renderTemplateList(w http.ResponseWriter, r *http.Request, status int, form views.TemplateForm) {
	list, err := s.db.TemplatesFor(r.Context(), nil, viewer(r, authz.ViewTemplates))
	if err == nil {
		form.Workspaces, err = s.db.WorkspacesFor(r.Context(), nil, viewer(r, authz.ViewWorkspace))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.TemplateListPage(views.TemplateList{Shell: s.shell(r, "Templates", "templates"), Templates: list, Form: form}))
}

// handleTemplateCreateForm serves POST /templates.
func (s *Server) handleTemplateCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	form := views.TemplateForm{Name: strings.TrimSpace(r.PostFormValue("name")), YAML: r.PostFormValue("yaml")}
	wsID, _ := strconv.ParseInt(r.PostFormValue("workspace_id"), 10, 64)
	form.WorkspaceID = wsID
	t, err := s.svc.Templates.Create(r.Context(), actorFrom(r), resolute.TemplateRequest{Name: form.Name, YAML: form.YAML, WorkspaceID: wsID})
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict || code == resolute.ENotFound {
		form.Errors = templateFormErrors(err)
		s.renderTemplateList(w, r, http.StatusUnprocessableEntity, form)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/templates/"+t.Name, "ok", "Created template "+t.Name+".")
}

// templateFormErrors puts a name error next to the name and every config
// error, one per line, next to the YAML.
func templateFormErrors(err error) views.FormErrors {
	msg := resolute.ErrorMessage(err)
	if strings.HasPrefix(msg, "name: ") || resolute.ErrorCode(err) == resolute.EConflict {
		return views.FormErrors{"name": fieldMessage(err)}
	}
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return views.FormErrors{"workspace_id": msg}
	}
	return views.FormErrors{"yaml": msg}
}

// handleTemplatePage serves GET /templates/{name}.
func (s *Server) handleTemplatePage(w http.ResponseWriter, r *http.Request) {
	t, err := s.db.Template(r.Context(), chi.URLParam(r, "name"))
	if err == nil {
		err = readable(r, authz.Template(t))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.TemplateView(views.TemplatePage{Shell: s.shell(r, "Template "+t.Name, "templates"), Template: t, YAML: expconf.MaskYAML(t.ConfigYAML)}))
}

// handleTemplateEditForm serves POST /templates/{name}: save edited YAML, or
// show it again with the errors beside it.
func (s *Server) handleTemplateEditForm(w http.ResponseWriter, r *http.Request) {
	t, err := s.db.Template(r.Context(), chi.URLParam(r, "name"))
	if err == nil {
		err = parseForm(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	text := r.PostFormValue("yaml")
	_, err = s.svc.Templates.Update(r.Context(), actorFrom(r), resolute.TemplateRequest{Name: t.Name, YAML: text})
	if code := resolute.ErrorCode(err); code == resolute.EInvalid {
		s.render(w, r, http.StatusUnprocessableEntity, views.TemplateView(views.TemplatePage{
			Shell: s.shell(r, "Template "+t.Name, "templates"), Template: t, YAML: text, Errors: templateFormErrors(err)}))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/templates/"+t.Name, "ok", "Saved template "+t.Name+".")
}

// handleTemplateDeleteForm serves POST /templates/{name}/delete.
func (s *Server) handleTemplateDeleteForm(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if err := s.svc.Templates.Delete(r.Context(), actorFrom(r), name); err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/templates", "ok", "Deleted template "+name+".")
}
