package handlers

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
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
	if f.Projects, err = s.db.Projects(r.Context(), db.ProjectFilter{Archived: new(false)}); err == nil {
		f.Templates, err = s.db.Templates(r.Context(), nil)
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
	f, code, err := readExperimentForm(r)
	f.HadCode = len(code) > 0
	if err == nil {
		code, err = contextArchive(code)
	}
	var e resolute.Experiment
	if err == nil {
		e, err = s.svc.Experiments.Create(r.Context(), actorFrom(r), control.CreateRequest{ConfigYAML: f.YAML, Template: f.Template,
			Context: code, ProjectID: f.ProjectID, Paused: f.Paused})
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

// readExperimentForm reads the new-experiment form; the code archive comes
// back as uploaded.
func readExperimentForm(r *http.Request) (views.ExperimentForm, []byte, error) {
	var f views.ExperimentForm
	mr, err := r.MultipartReader()
	if err != nil {
		return f, nil, resolute.Errorf(resolute.EInvalid, "malformed form: expected multipart/form-data: %v", err)
	}
	var file, code []byte
	var files []archiveFile
	for {
		part, err := nextPart(mr)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return f, nil, err
		}
		limit := int64(1 << 20)
		if part.FormName() == "code" || part.FormName() == "code_files" {
			limit = control.MaxContextBytes
		}
		data, err := readPart(part, limit)
		if err != nil {
			return f, nil, err
		}
		switch v := string(data); part.FormName() {
		case "yaml":
			f.YAML = v
		case "config_file":
			file = data
		case "code":
			code = data
		case "code_files":
			if part.FileName() != "" {
				files = append(files, archiveFile{part.FileName(), data})
			}
		case "template":
			f.Template = v
		case "project_id":
			if f.ProjectID, err = strconv.ParseInt(v, 10, 64); err != nil {
				return f, nil, resolute.Errorf(resolute.EInvalid, "project_id: expected an integer, got %q", v)
			}
		case "paused":
			f.Paused = v != ""
		}
	}
	if len(file) > 0 {
		f.YAML = string(file)
	}
	if len(files) > 0 && len(code) > 0 {
		return f, nil, resolute.Errorf(resolute.EInvalid, "code: choose an archive or files, not both")
	} else if len(files) > 0 {
		tgz, err := filesToTgz(files)
		return f, tgz, err
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

// contextArchive turns an uploaded code archive into the tar.gz experiments
// store: a tar.gz as it is, a zip converted; nothing stays nothing.
func contextArchive(data []byte) ([]byte, error) {
	switch {
	case len(data) == 0:
		return nil, nil
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return data, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return zipToTgz(data, control.MaxContextBytes*4)
	case isTar(data):
		return gzipBytes(data)
	}
	return nil, resolute.Errorf(resolute.EInvalid, "code: expected a .tar.gz, .tgz, .tar or .zip archive")
}

// zipToTgz repacks a zip archive as a tar.gz of the same files and
// directories. Absolute paths, paths through "..", links and archives that
// unpack to more than maxUnpacked bytes are refused.
func zipToTgz(data []byte, maxUnpacked int64) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, resolute.Errorf(resolute.EInvalid, "code: not a readable zip archive: %v", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	var total int64
	for _, f := range zr.File {
		name, ok := safeArchivePath(f.Name)
		if !ok {
			return nil, resolute.Errorf(resolute.EInvalid, "code: %q: paths must stay inside the context directory", f.Name)
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: f.Modified})
		case mode.IsRegular():
			size := int64(f.UncompressedSize64)
			if total += size; size < 0 || total > maxUnpacked {
				return nil, resolute.Errorf(resolute.ETooLarge, "code: unpacks to more than %d bytes", maxUnpacked)
			}
			perm := int64(mode.Perm() | 0o600)
			if err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: perm, Size: size, ModTime: f.Modified}); err == nil {
				err = copyZipFile(tw, f, size)
			}
		default:
			return nil, resolute.Errorf(resolute.EInvalid, "code: %q: only files and directories may be uploaded", f.Name)
		}
		if err != nil {
			return nil, resolute.Errorf(resolute.EInvalid, "code: %q: %v", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("packing the code: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("packing the code: %w", err)
	}
	return buf.Bytes(), nil
}

func copyZipFile(w io.Writer, f *zip.File, size int64) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.CopyN(w, rc, size)
	return err
}

// safeArchivePath cleans a path from an archive; it refuses absolute paths,
// drive letters and paths that climb out through "..".
func safeArchivePath(name string) (string, bool) {
	name = strings.ReplaceAll(name, `\`, "/")
	if name == "" || strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return "", false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", false
		}
	}
	clean := path.Clean(name)
	return clean, clean != "." && clean != ""
}
