package handlers

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// readCreate reads a submission from JSON or multipart/form-data; its
// context directory is streamed to a temporary file of u.
func readCreate(r *http.Request, u *upload, limit int64) (resolute.CreateExperimentRequest, *contextdir.File, error) {
	var req resolute.CreateExperimentRequest
	var tgz *contextdir.File
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err := decodeJSONUpload(r.Body, &req, "contextTgz", limit, func(body io.Reader) (err error) {
			tgz, err = u.spool(r.Context(), body, contextdir.MaxArchiveBytes)
			return err
		})
		return req, tgz, err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return req, nil, resolute.Errorf(resolute.EInvalid, "malformed multipart body: %v", err)
	}
	for {
		part, err := nextPart(mr)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return req, tgz, err
		}
		if part.FormName() == "context" {
			if tgz != nil {
				return req, tgz, resolute.Errorf(resolute.EInvalid, "context: given twice")
			}
			if tgz, err = u.spool(r.Context(), part, contextdir.MaxArchiveBytes); err != nil {
				return req, tgz, err
			}
			continue
		}
		data, err := readPart(part, 1<<20)
		if err != nil {
			return req, tgz, err
		}
		v := string(data)
		switch part.FormName() {
		case "config":
			req.Config = v
		case "template":
			req.Template = v
		case "override":
			req.Overrides = append(req.Overrides, v)
		case "project_id":
			if req.ProjectID, err = strconv.ParseInt(v, 10, 64); err != nil {
				return req, tgz, resolute.Errorf(resolute.EInvalid, "project_id: expected an integer, got %q", v)
			}
		case "parent_id":
			if req.ParentID, err = strconv.ParseInt(v, 10, 64); err != nil {
				return req, tgz, resolute.Errorf(resolute.EInvalid, "parent_id: expected an integer, got %q", v)
			}
		case "paused":
			f := !(v == "true" || v == "1")
			req.Activate = &f
		case "validate_only":
			req.ValidateOnly = v == "true" || v == "1"
		default:
			return req, tgz, resolute.Errorf(resolute.EInvalid, "%s: unknown field", part.FormName())
		}
	}
	return req, tgz, nil
}

// nextPart returns the next part of a multipart body, io.EOF at its end; a
// body over the limit is a 413.
func nextPart(mr *multipart.Reader) (*multipart.Part, error) {
	part, err := mr.NextPart()
	var tooBig *http.MaxBytesError
	var known *resolute.Error
	switch {
	case errors.Is(err, io.EOF):
		return nil, io.EOF
	case errors.As(err, &tooBig):
		return nil, uploadTooLarge(tooBig)
	case errors.As(err, &known):
		return nil, known
	case err != nil:
		return nil, resolute.Errorf(resolute.EInvalid, "malformed multipart body: %v", err)
	}
	return part, nil
}

// readPart reads a small field of a multipart body, of at most limit bytes.
func readPart(part *multipart.Part, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(part, limit+1))
	var tooBig *http.MaxBytesError
	var known *resolute.Error
	if errors.As(err, &tooBig) {
		return nil, uploadTooLarge(tooBig)
	} else if errors.As(err, &known) {
		return nil, known
	} else if err != nil {
		return nil, resolute.Errorf(resolute.EInvalid, "reading %s: %v", part.FormName(), err)
	}
	if int64(len(data)) > limit {
		return nil, resolute.Errorf(resolute.ETooLarge, "%s: larger than %d MiB", part.FormName(), limit>>20)
	}
	return data, nil
}

// handleAPIExperimentCreate serves POST /api/v1/experiments: a config and a
// context directory (tar.gz) become an experiment; with validateOnly the
// expanded config comes back and nothing is created.
func (s *Server) handleAPIExperimentCreate(w http.ResponseWriter, r *http.Request) {
	u := s.newUpload()
	defer u.Close()
	req, tgz, err := readCreate(r, u, s.cfg.MaxBodyBytes)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if req.ValidateOnly {
		cfg, err := s.configs.ExpandExperiment(r.Context(), actorFrom(r), []byte(req.Config), req.Template, req.Overrides)
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resolute.ValidateResponse{Config: resolute.MaskConfigMap(cfg.Map()), Warnings: nonNil(cfg.Warnings)})
		return
	}
	creq := control.CreateRequest{ConfigYAML: req.Config, Template: req.Template, Overrides: req.Overrides,
		Context: archive(tgz), ProjectID: req.ProjectID, Paused: req.Activate != nil && !*req.Activate}
	if req.ParentID != 0 {
		creq.ParentID = &req.ParentID
	}
	e, err := s.svc.Experiments.Create(r.Context(), actorFrom(r), creq)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentResponse{Experiment: e})
}

// handleAPIPreviewSearch serves POST /api/v1/preview-hp-search: the plan of
// the config's hyperparameter search, or every error in the config.
func (s *Server) handleAPIPreviewSearch(w http.ResponseWriter, r *http.Request) {
	var req resolute.ExperimentConfigRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	cfg, plan, err := s.configs.PreviewSearch(r.Context(), actorFrom(r), []byte(req.Config), req.Template, req.Overrides)
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

// handleAPIExperimentList serves GET /api/v1/experiments[?project_id=&archived=&states=&limit=&offset=].
func (s *Server) handleAPIExperimentList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f db.ExperimentFilter
	var err error
	if v := q.Get("project_id"); v != "" {
		id, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "project_id: expected an integer, got %q", v))
			return
		}
		f.ProjectID = &id
	}
	if f.Archived, err = archivedFilter(r); err == nil {
		f.Limit, err = optInt(q.Get("limit"), "limit")
	}
	if err == nil {
		f.Offset, err = optInt(q.Get("offset"), "offset")
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	for _, st := range q["states"] {
		f.States = append(f.States, strings.TrimPrefix(strings.ToUpper(st), "STATE_"))
	}
	f.Viewer = viewer(r, authz.ViewExperiment)
	list, err := s.db.Experiments(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ExperimentsResponse{Experiments: list})
}
