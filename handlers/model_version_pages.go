package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// The pages of model versions, and registering a checkpoint from the
// checkpoint tables of experiments and trials.

// handleModelVersionPage serves GET /models/{name}/versions/{num} ({num}
// may be latest or @alias).
func (s *Server) handleModelVersionPage(w http.ResponseWriter, r *http.Request) {
	m, v, err := s.modelVersionParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.renderModelVersion(w, r, http.StatusOK, m, v, versionEdit(v))
}

func versionEdit(v resolute.ModelVersion) views.VersionEdit {
	return views.VersionEdit{Name: v.Name, Comment: v.Comment, Notes: v.Notes, Metadata: indentJSON(v.Metadata)}
}

func (s *Server) renderModelVersion(w http.ResponseWriter, r *http.Request, status int, m resolute.Model, v resolute.ModelVersion, edit views.VersionEdit) {
	p := views.ModelVersionPage{Shell: s.shell(r, "Model "+m.Name+" version "+itoa(int64(v.Version)), "models"),
		Model: m, Version: v, CanChange: mayChangeModel(r, m), Edit: edit}
	var err error
	if p.Metric, err = s.experimentMetric(r, v.ExperimentID, map[int64]string{}); err != nil {
		s.error(w, r, err)
		return
	}
	avg := avgMetrics(v.Validation)
	for name, value := range avg {
		p.Metrics = append(p.Metrics, [2]string{name, metricText(value)})
	}
	slices.SortFunc(p.Metrics, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	history, err := s.db.TrialMetrics(r.Context(), v.TrialID, "validation")
	if err != nil {
		s.error(w, r, err)
		return
	}
	p.History = metricsTable("validation", history)
	clearFlash(w, r)
	s.render(w, r, status, views.ModelVersionView(p))
}

// handleModelVersionEditForm serves POST /models/{name}/versions/{num}/edit:
// name, comment, notes and metadata.
func (s *Server) handleModelVersionEditForm(w http.ResponseWriter, r *http.Request) {
	m, v, err := s.modelVersionParam(r)
	if err == nil {
		err = parseForm(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	edit := views.VersionEdit{Name: strings.TrimSpace(r.PostFormValue("name")), Comment: r.PostFormValue("comment"),
		Notes: r.PostFormValue("notes"), Metadata: r.PostFormValue("metadata")}
	raw := metadataText(edit.Metadata)
	req := resolute.ModelVersionRequest{Name: &edit.Name, Comment: &edit.Comment, Notes: &edit.Notes, Metadata: &raw}
	_, err = s.svc.Models.EditVersion(r.Context(), actorFrom(r), m.Name, v.Version, req)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid {
		edit.Errors = views.FormErrors{errorField(err, "metadata", "name", "comment", "notes", "metadata"): fieldMessage(err)}
		s.renderModelVersion(w, r, http.StatusUnprocessableEntity, m, v, edit)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.VersionPath(m.Name, v.Version), "ok", "Saved version "+itoa(int64(v.Version))+".")
}

// handleModelVersionDeleteForm serves POST
// /models/{name}/versions/{num}/delete; the checkpoint stays.
func (s *Server) handleModelVersionDeleteForm(w http.ResponseWriter, r *http.Request) {
	m, v, err := s.modelVersionParam(r)
	if err == nil {
		_, err = s.svc.Models.DeleteVersion(r.Context(), actorFrom(r), m.Name, v.Version)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, views.ModelPath(m.Name), "ok", "Deleted version "+itoa(int64(v.Version))+" of model "+m.Name+".")
}

// handleRegisterPage serves GET /models/register?checkpoint=UUID: the
// register form of one checkpoint. Without a checkpoint it explains where checkpoints are and asks for a
// UUID; a malformed or unknown one is asked for again with the reason.
func (s *Server) handleRegisterPage(w http.ResponseWriter, r *http.Request) {
	form := views.RegisterForm{CheckpointUUID: strings.TrimSpace(r.URL.Query().Get("checkpoint"))}
	status := http.StatusOK
	if form.CheckpointUUID != "" && !control.ValidUUID(form.CheckpointUUID) {
		status = http.StatusBadRequest
		form.Errors = views.FormErrors{"checkpoint_uuid": "Expected a checkpoint's UUID, such as 4c6d3a1e-…; got " + strconv.Quote(form.CheckpointUUID) + "."}
	} else if form.CheckpointUUID != "" {
		if _, err := s.db.Checkpoint(r.Context(), form.CheckpointUUID); resolute.ErrorCode(err) == resolute.ENotFound {
			status = http.StatusNotFound
			form.Errors = views.FormErrors{"checkpoint_uuid": "There is no checkpoint " + form.CheckpointUUID + "."}
		}
	}
	s.renderRegister(w, r, status, form)
}

func (s *Server) renderRegister(w http.ResponseWriter, r *http.Request, status int, form views.RegisterForm) {
	p := views.RegisterPage{Shell: s.shell(r, "Register checkpoint", "models"), Form: form}
	var err error
	if control.ValidUUID(form.CheckpointUUID) {
		p.Checkpoint, err = s.db.Checkpoint(r.Context(), form.CheckpointUUID)
		if resolute.ErrorCode(err) == resolute.ENotFound && status != http.StatusOK {
			err = nil // the form already says so
		}
	}
	if err == nil {
		p.Models, err = s.registerChoices(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.RegisterView(p))
}

// handleModelRegisterForm serves POST /models/register: checkpoint_uuid,
// and model_name (an existing model) or new_model_name (created when
// missing, as is model_name with create_if_missing). It answers with the
// new version's page; a rejected registration comes back on the register
// page with its errors.
func (s *Server) handleModelRegisterForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	form := views.RegisterForm{CheckpointUUID: strings.TrimSpace(r.PostFormValue("checkpoint_uuid")),
		Model: r.PostFormValue("model_name"), NewModel: strings.TrimSpace(r.PostFormValue("new_model_name"))}
	name, create, field := form.Model, r.PostFormValue("create_if_missing") != "", "model_name"
	if form.NewModel != "" {
		name, create, field = form.NewModel, true, "new_model_name"
	}
	v, err := s.svc.Models.RegisterCheckpoint(r.Context(), actorFrom(r), form.CheckpointUUID, name, create)
	switch code := resolute.ErrorCode(err); {
	case err == nil:
		redirect(w, r, views.VersionPath(v.ModelName, v.Version), "ok",
			"Registered checkpoint "+shortID(v.CheckpointUUID)+" as version "+itoa(int64(v.Version))+" of model "+v.ModelName+".")
	case code == resolute.EInvalid || code == resolute.ENotFound || code == resolute.EConflict:
		msg := resolute.ErrorMessage(err)
		if strings.HasPrefix(msg, "checkpoint") {
			field = "checkpoint_uuid"
		}
		form.Errors = views.FormErrors{field: fieldMessage(err)}
		s.renderRegister(w, r, http.StatusUnprocessableEntity, form)
	default:
		s.error(w, r, err)
	}
}

// registerChoices lists the unarchived models the viewer may add
// versions to, by name.
func (s *Server) registerChoices(r *http.Request) ([]string, error) {
	list, err := s.db.Models(r.Context(), db.ModelFilter{Archived: new(false), Sort: "name", Viewer: viewer(r, authz.ViewModelRegistry)})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range list {
		if mayChangeModel(r, m) {
			names = append(names, m.Name)
		}
	}
	return names, nil
}

// markRegistered notes on checkpoint rows which are model versions and
// returns the Register form's choices.
func (s *Server) markRegistered(r *http.Request, rows []views.CheckpointRow) (views.RegisterChoices, error) {
	uuids := make([]string, len(rows))
	for i, c := range rows {
		uuids[i] = c.Checkpoint.UUID
	}
	reg, err := s.db.CheckpointRegistrations(r.Context(), uuids)
	if err != nil {
		return views.RegisterChoices{}, err
	}
	for i, c := range rows {
		if g, ok := reg[c.Checkpoint.UUID]; ok {
			rows[i].Registered = g.Model + " v" + itoa(int64(g.Version))
			rows[i].RegisteredPath = views.VersionPath(g.Model, g.Version)
		}
	}
	models, err := s.registerChoices(r)
	return views.RegisterChoices{Models: models}, err
}

// shortID is the first block of a UUID, as tables show it.
func shortID(uuid string) string {
	if i := strings.IndexByte(uuid, '-'); i > 0 {
		return uuid[:i]
	}
	return uuid
}
