package handlers

import (
	"bytes"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/harness"
)

// PythonPath is where the master serves its Python package (the SDK, the
// Core API and the Trial APIs) as a wheel: pip installs it with
//
//	pip install --no-index --find-links http://<master>/python/ determined
//
// No session is needed: it is code every task already gets, not data.
const PythonPath = "/python/"

// wheel is the package as this master serves it.
func (s *Server) wheel() (*harness.Wheel, error) {
	w, err := harness.BuildWheel(s.cfg.Master.Version)
	if err != nil {
		return nil, resolute.Errorf(resolute.EInternal, "build the Python wheel: %v", err)
	}
	return w, nil
}

// handlePythonIndex serves GET /python/: a page linking the wheel, in the
// form pip's --find-links reads (with its sha256, which pip checks).
func (s *Server) handlePythonIndex(w http.ResponseWriter, r *http.Request) {
	wh, err := s.wheel()
	if err != nil {
		s.error(w, r, err)
		return
	}
	name := html.EscapeString(wh.Name)
	master := html.EscapeString(s.cfg.Master.URL)
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>determined " +
		html.EscapeString(wh.Version) + "</title></head><body>\n<h1>Python package</h1>\n")
	b.WriteString(`<p><a href="` + name + `#sha256=` + wh.SHA256 + `">` + name + "</a></p>\n")
	b.WriteString("<p>Install it with <code>pip install --no-index --find-links " + master + PythonPath +
		" determined</code>, or <code>pip install " + master + PythonPath + name + "</code>.</p>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b.Bytes())
}

// handlePythonWheel serves GET /python/{file}: the wheel under its own name
// (pip reads the version from it); any other name is a 404.
func (s *Server) handlePythonWheel(w http.ResponseWriter, r *http.Request) {
	wh, err := s.wheel()
	if err != nil {
		s.error(w, r, err)
		return
	}
	// pip asks for "+" as %2B, which chi leaves escaped.
	if file, err := url.PathUnescape(chi.URLParam(r, "file")); err != nil || file != wh.Name {
		s.error(w, r, resolute.Errorf(resolute.ENotFound, "this master serves %s%s", PythonPath, wh.Name))
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Length", strconv.Itoa(len(wh.Data)))
	w.Header().Set("Content-Disposition", `attachment; filename="`+wh.Name+`"`)
	w.Header().Set("ETag", `"`+wh.SHA256+`"`)
	http.ServeContent(w, r, wh.Name, time.Time{}, bytes.NewReader(wh.Data))
}
