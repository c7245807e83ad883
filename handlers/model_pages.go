package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// The Model Registry pages, under /models. They call the same rules as the
// API in models.go and model_versions.go.

// handleModelListPage serves GET /models[?search=&label=&sort=&archived=1].
func (s *Server) handleModelListPage(w http.ResponseWriter, r *http.Request) {
	s.renderModelList(w, r, http.StatusOK, views.ModelForm{})
}

func (s *Server) renderModelList(w http.ResponseWriter, r *http.Request, status int, form views.ModelForm) {
	q := r.URL.Query()
	l := views.ModelList{Shell: s.shell(r, "Model Registry", "models"), Search: strings.TrimSpace(q.Get("search")),
		Label: q.Get("label"), Sort: q.Get("sort"), Archived: q.Get("archived") != "", Form: form}
	if !slices.ContainsFunc(views.ModelSorts, func(o [2]string) bool { return o[0] == l.Sort }) {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "sort: expected name, updated or versions, got %q", l.Sort))
		return
	}
	f := db.ModelFilter{Search: l.Search, Sort: l.Sort}
	if !l.Archived {
		f.Archived = new(false)
	}
	if l.Label != "" {
		f.Labels = []string{l.Label}
	}
	var err error
	f.Viewer = viewer(r, authz.ViewModelRegistry)
	if l.Models, err = s.db.Models(r.Context(), f); err != nil {
		s.error(w, r, err)
		return
	}
	all, err := s.db.Models(r.Context(), db.ModelFilter{Viewer: f.Viewer})
	if err != nil {
		s.error(w, r, err)
		return
	}
	for _, m := range all {
		l.Labels = append(l.Labels, m.Labels...)
	}
	slices.Sort(l.Labels)
	l.Labels = slices.Compact(l.Labels)
	clearFlash(w, r)
	s.render(w, r, status, views.ModelListPage(l))
}

// handleModelCreateForm serves POST /models: name, description, labels.
func (s *Server) handleModelCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	form := views.ModelForm{Name: strings.TrimSpace(r.PostFormValue("name")),
		Description: r.PostFormValue("description"), Labels: r.PostFormValue("labels")}
	labels := splitLabels(form.Labels)
	m, err := s.svc.Models.Create(r.Context(), actorFrom(r), resolute.ModelRequest{Name: &form.Name, Description: &form.Description, Labels: &labels})
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		form.Errors = views.FormErrors{"name": fieldMessage(err)}
		s.renderModelList(w, r, http.StatusUnprocessableEntity, form)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.ModelPath(m.Name), "ok", "Created model "+m.Name+".")
}

// handleModelPage serves GET /models/{name}.
func (s *Server) handleModelPage(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.renderModel(w, r, http.StatusOK, m, modelEdit(m), views.AliasForm{})
}

// modelEdit fills the model's edit forms with its stored values.
func modelEdit(m resolute.Model) views.ModelEdit {
	return views.ModelEdit{Description: m.Description, Labels: views.LabelsText(m.Labels), Notes: m.Notes,
		Metadata: indentJSON(m.Metadata)}
}

func (s *Server) renderModel(w http.ResponseWriter, r *http.Request, status int, m resolute.Model, edit views.ModelEdit, alias views.AliasForm) {
	p := views.ModelPage{Shell: s.shell(r, "Model "+m.Name, "models"), Model: m, Metadata: indentJSON(m.Metadata),
		CanChange: mayChangeModel(r, m), Edit: edit, Alias: alias}
	versions, err := s.db.ModelVersions(r.Context(), m.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	metrics := map[int64]string{} // experiment → searcher metric
	for _, v := range versions {
		row := views.ModelVersionRow{Version: v}
		if row.Metric, err = s.experimentMetric(r, v.ExperimentID, metrics); err == nil {
			v.Validation, err = s.db.ValidationAtStep(r.Context(), v.TrialID, v.StepsCompleted)
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		row.Value = metricText(avgMetrics(v.Validation)[row.Metric])
		p.Versions = append(p.Versions, row)
	}
	clearFlash(w, r)
	s.render(w, r, status, views.ModelView(p))
}

// experimentMetric is the searcher metric of an experiment, remembered in
// seen across the versions of a page.
func (s *Server) experimentMetric(r *http.Request, id int64, seen map[int64]string) (string, error) {
	if m, ok := seen[id]; ok {
		return m, nil
	}
	e, err := s.db.Experiment(r.Context(), id)
	if err != nil {
		return "", err
	}
	seen[id], _ = searcherMetric(e.Config)
	return seen[id], nil
}

// handleModelEditForm serves POST /models/{name}/edit: any of description,
// labels, notes and metadata; the fields not posted stay.
func (s *Server) handleModelEditForm(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	if err == nil {
		err = parseForm(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	edit, req := modelEdit(m), resolute.ModelRequest{}
	posted := func(name string, into *string) *string {
		if _, ok := r.PostForm[name]; !ok {
			return nil
		}
		*into, edit.Open = r.PostFormValue(name), name
		return into
	}
	req.Description = posted("description", &edit.Description)
	req.Notes = posted("notes", &edit.Notes)
	if text := posted("labels", &edit.Labels); text != nil {
		labels := splitLabels(*text)
		req.Labels = &labels
	}
	if text := posted("metadata", &edit.Metadata); text != nil {
		raw := metadataText(*text)
		req.Metadata = &raw
	}
	updated, err := s.svc.Models.Edit(r.Context(), actorFrom(r), m.Name, req)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		field := errorField(err, edit.Open, "description", "labels", "notes", "metadata")
		edit.Errors, edit.Open = views.FormErrors{field: fieldMessage(err)}, field
		s.renderModel(w, r, http.StatusUnprocessableEntity, m, edit, views.AliasForm{})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.ModelPath(updated.Name), "ok", "Saved model "+updated.Name+".")
}

// handleModelAliasForm serves POST /models/{name}/aliases: alias, version.
// It points the alias at the version, moving it if it pointed elsewhere.
func (s *Server) handleModelAliasForm(w http.ResponseWriter, r *http.Request) {
	m, err := s.modelParam(r)
	if err == nil {
		err = parseForm(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	form := views.AliasForm{Alias: strings.TrimSpace(r.PostFormValue("alias"))}
	var v resolute.ModelVersion
	form.Version, err = atoiField("version", r.PostFormValue("version"))
	if err == nil {
		v, err = s.svc.Models.SetAlias(r.Context(), actorFrom(r), m.Name, form.Alias, form.Version)
		if resolute.ErrorCode(err) == resolute.ENotFound {
			err = resolute.Errorf(resolute.EInvalid, "version: %s", resolute.ErrorMessage(err))
		}
	}
	if resolute.ErrorCode(err) == resolute.EInvalid {
		form.Errors = views.FormErrors{errorField(err, "alias", "alias", "version"): fieldMessage(err)}
		s.renderModel(w, r, http.StatusUnprocessableEntity, m, modelEdit(m), form)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.ModelPath(m.Name), "ok", "Alias "+form.Alias+" now points at version "+itoa(int64(v.Version))+".")
}

// handleModelAliasDeleteForm serves POST /models/{name}/aliases/{alias}/delete.
func (s *Server) handleModelAliasDeleteForm(w http.ResponseWriter, r *http.Request) {
	name, alias := chi.URLParam(r, "name"), chi.URLParam(r, "alias")
	if err := s.svc.Models.RemoveAlias(r.Context(), actorFrom(r), name, alias); err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.ModelPath(name), "ok", "Removed alias "+alias+".")
}

// handleModelArchiveForm serves POST /models/{name}/archive and /unarchive.
func (s *Server) handleModelArchiveForm(archived bool) http.HandlerFunc {
	done := map[bool]string{true: "Archived", false: "Unarchived"}[archived]
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := s.svc.Models.SetArchived(r.Context(), actorFrom(r), chi.URLParam(r, "name"), archived)
		if err != nil {
			s.error(w, r, err)
			return
		}
		redirect(w, r, views.ModelPath(m.Name), "ok", done+" model "+m.Name+".")
	}
}

// handleModelDeleteForm serves POST /models/{name}/delete: the model, its
// versions and aliases; the checkpoints stay.
func (s *Server) handleModelDeleteForm(w http.ResponseWriter, r *http.Request) {
	m, err := s.svc.Models.Delete(r.Context(), actorFrom(r), chi.URLParam(r, "name"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/models", "ok", "Deleted model "+m.Name+" and its "+itoa(int64(m.NumVersions))+" versions.")
}

// splitLabels reads comma-separated labels, dropping blanks and repeats.
func splitLabels(text string) []string {
	out := []string{}
	for _, l := range strings.Split(text, ",") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// metadataText reads a metadata field: blank means an empty object.
func metadataText(text string) json.RawMessage {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(text)
}

// indentJSON shows stored JSON indented; "{}" for nothing.
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
		return "{}"
	}
	return b.String()
}

// errorField says which form field a validation error is about: the one
// its message starts with, else fallback.
func errorField(err error, fallback string, fields ...string) string {
	msg := resolute.ErrorMessage(err)
	for _, f := range fields {
		if strings.HasPrefix(msg, f+": ") {
			return f
		}
	}
	return fallback
}

// atoiField reads a positive integer form field.
func atoiField(field, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, resolute.Errorf(resolute.EInvalid, "%s: expected a positive number, got %q", field, v)
	}
	return n, nil
}
