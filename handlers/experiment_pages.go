package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

func experimentPath(id int64) string { return "/experiments/" + itoa(id) }

// handleExperimentNewPage serves GET /experiments/new.
func (s *Server) handleExperimentNewPage(w http.ResponseWriter, r *http.Request) {
	s.renderExperimentForm(w, r, http.StatusOK, views.ExperimentForm{})
}

func (s *Server) renderExperimentForm(w http.ResponseWriter, r *http.Request, status int, f views.ExperimentForm) {
	var err error
	if f.Projects, err = s.db.Projects(r.Context(), db.ProjectFilter{Archived: new(false), Viewer: viewer(r, authz.ViewProject)}); err == nil {
		f.Templates, err = s.db.TemplatesFor(r.Context(), nil, viewer(r, authz.ViewTemplates))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	f.Shell = s.shell(r, "New experiment", "experiments")
	clearFlash(w, r)
	s.render(w, r, status, views.NewExperimentPage(f))
}

// handleExperimentCreateForm serves POST /experiments/new (multipart): a
// config (pasted or a file) and the code become an experiment; a rejected
// submission comes back with every error beside its field.
func (s *Server) handleExperimentCreateForm(w http.ResponseWriter, r *http.Request) {
	u := s.newUpload()
	defer u.Close()
	f, code, err := readExperimentForm(r, u)
	f.HadCode = code.Size() > 0
	if err == nil {
		code, err = u.normalize(code)
	}
	var e resolute.Experiment
	if err == nil {
		e, err = s.svc.Experiments.Create(r.Context(), actorFrom(r), control.CreateRequest{ConfigYAML: f.YAML, Template: f.Template,
			Context: archive(code), ProjectID: f.ProjectID, Paused: f.Paused})
	}
	switch resolute.ErrorCode(err) {
	case "":
		redirect(w, r, experimentPath(e.ID), "ok", "Created experiment "+itoa(e.ID)+".")
	case resolute.EInvalid, resolute.ENotFound, resolute.EConflict, resolute.ETooLarge:
		f.Errors = experimentFormErrors(err, f)
		s.renderExperimentForm(w, r, http.StatusUnprocessableEntity, f)
	default:
		s.error(w, r, err)
	}
}

// readExperimentForm reads the new-experiment form; the code comes back
// as uploaded (an archive, or the files packed as a tar.gz as they come),
// in a temporary file of u.
func readExperimentForm(r *http.Request, u *upload) (views.ExperimentForm, *contextdir.File, error) {
	var f views.ExperimentForm
	mr, err := r.MultipartReader()
	if err != nil {
		return f, nil, resolute.Errorf(resolute.EInvalid, "malformed form: expected multipart/form-data: %v", err)
	}
	var file []byte
	var code *contextdir.File
	files := &filePacker{u: u}
	for {
		part, err := nextPart(mr)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return f, code, err
		}
		switch part.FormName() {
		case "code":
			if code, err = u.spool(r.Context(), part, contextdir.MaxArchiveBytes); err != nil {
				return f, code, err
			}
			continue
		case "code_files":
			if part.FileName() == "" {
				continue
			}
			if err := files.add(r.Context(), part.FileName(), part); err != nil {
				return f, code, err
			}
			continue
		}
		data, err := readPart(part, 1<<20)
		if err != nil {
			return f, code, err
		}
		switch v := string(data); part.FormName() {
		case "yaml":
			f.YAML = v
		case "config_file":
			file = data
		case "template":
			f.Template = v
		case "project_id":
			if f.ProjectID, err = strconv.ParseInt(v, 10, 64); err != nil {
				return f, code, resolute.Errorf(resolute.EInvalid, "project_id: expected an integer, got %q", v)
			}
		case "paused":
			f.Paused = v != ""
		}
	}
	if len(file) > 0 {
		f.YAML = string(file)
	}
	packed, err := files.close()
	switch {
	case err != nil:
		return f, code, err
	case packed != nil && code.Size() > 0:
		return f, code, resolute.Errorf(resolute.EInvalid, "code: choose an archive or files, not both")
	case packed != nil:
		return f, packed, nil
	}
	return f, code, nil
}

// experimentFormErrors puts an error beside the field it is about: the
// code, the chosen template or project, else the config.
func experimentFormErrors(err error, f views.ExperimentForm) views.FormErrors {
	msg := resolute.ErrorMessage(err)
	switch {
	case strings.HasPrefix(msg, "context: ") || strings.HasPrefix(msg, "code: "):
		return views.FormErrors{"code": fieldMessage(err)}
	case resolute.ErrorCode(err) == resolute.ETooLarge:
		return views.FormErrors{"code": msg}
	case f.Template != "" && strings.HasPrefix(msg, "template "):
		return views.FormErrors{"template": msg}
	case f.ProjectID != 0 && strings.HasPrefix(msg, "project "):
		return views.FormErrors{"project_id": msg}
	}
	return views.FormErrors{"yaml": msg}
}

// handleExperimentActionForm serves POST /experiments/{id}/{activate, pause,
// cancel, kill}.
func (s *Server) handleExperimentActionForm(action string) http.HandlerFunc {
	done := map[string]string{"activate": "Activated", "pause": "Paused", "cancel": "Canceling", "kill": "Killing"}[action]
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := idParam(r, "id")
		if err == nil {
			err = s.svc.Experiments.SetState(r.Context(), actorFrom(r), id, action)
		}
		s.experimentFormDone(w, r, id, err, experimentPath(id), done+" experiment "+itoa(id)+".")
	}
}

// handleExperimentArchiveForm serves POST /experiments/{id}/archive and
// /unarchive.
func (s *Server) handleExperimentArchiveForm(archived bool) http.HandlerFunc {
	done := "Archived"
	if !archived {
		done = "Unarchived"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := idParam(r, "id")
		if err == nil {
			err = s.svc.Experiments.SetArchived(r.Context(), actorFrom(r), id, archived)
		}
		s.experimentFormDone(w, r, id, err, experimentPath(id), done+" experiment "+itoa(id)+".")
	}
}

// handleExperimentDeleteForm serves POST /experiments/{id}/delete.
func (s *Server) handleExperimentDeleteForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err == nil {
		err = s.svc.Experiments.Delete(r.Context(), actorFrom(r), id)
	}
	s.experimentFormDone(w, r, id, err, "/experiments", "Deleted experiment "+itoa(id)+".")
}

// experimentFormDone answers an experiment's action form: on success a
// redirect to target with message; a refusal by the state of experiment id
// goes back to its page as an error message.
func (s *Server) experimentFormDone(w http.ResponseWriter, r *http.Request, id int64, err error, target, message string) {
	if resolute.ErrorCode(err) == resolute.EConflict {
		redirect(w, r, experimentPath(id), "error", resolute.ErrorMessage(err))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, target, "ok", message)
}

// searcherMetric reads the searcher's metric and direction from an
// expanded config.
func searcherMetric(config json.RawMessage) (string, bool) {
	var c struct {
		Searcher struct {
			Metric          string `json:"metric"`
			SmallerIsBetter *bool  `json:"smaller_is_better"`
		} `json:"searcher"`
	}
	json.Unmarshal(config, &c)
	return c.Searcher.Metric, c.Searcher.SmallerIsBetter == nil || *c.Searcher.SmallerIsBetter
}
