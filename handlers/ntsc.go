package handlers

import (
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// The API of commands, notebooks, shells and TensorBoards ("NTSC"), one set
// of routes per kind as Determined's: /api/v1/{commands,notebooks,shells,
// tensorboards}[/{id}[/kill|/set_priority]].

// kinds maps the path segment to the task type.
var kinds = map[string]string{"commands": resolute.TaskCommand, "notebooks": resolute.TaskNotebook,
	"shells": resolute.TaskShell, "tensorboards": resolute.TaskTensorBoard}

// handleAPITaskCreate serves POST /api/v1/{kind}; the context directory
// (contextTgz) is streamed to a temporary file.
func (s *Server) handleAPITaskCreate(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := s.newUpload()
		defer u.Close()
		var req resolute.CreateTaskRequest
		var tgz *contextdir.File
		err := decodeJSONUpload(r.Body, &req, "contextTgz", s.cfg.MaxBodyBytes, func(body io.Reader) (err error) {
			tgz, err = u.spool(r.Context(), body, contextdir.MaxArchiveBytes)
			return err
		})
		if err != nil {
			s.error(w, r, err)
			return
		}
		t, err := s.svc.Tasks.Create(r.Context(), actorFrom(r), control.TaskRequest{Type: kinds[kind], ConfigYAML: req.Config,
			Template: req.TemplateName, Overrides: req.Overrides, Context: archive(tgz), ProjectID: req.ProjectID,
			Entrypoint: req.Entrypoint, ExperimentIDs: req.ExperimentIDs, TrialIDs: req.TrialIDs})
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resolute.TaskResponse{Task: s.withAddress(r, t)})
	}
}

// handleAPITaskList serves GET /api/v1/{kind}[?all=true] and GET
// /api/v1/tasks: live tasks, or all with all=true.
func (s *Server) handleAPITaskList(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f := db.TaskFilter{Type: kinds[kind], Viewer: viewer(r, authz.ViewNSC)}
		if all := r.URL.Query().Get("all"); all != "true" && all != "1" {
			live := true
			f.Live = &live
		}
		list, err := s.db.Tasks(r.Context(), f)
		if err != nil {
			s.error(w, r, err)
			return
		}
		for i := range list {
			list[i] = s.withAddress(r, list[i])
		}
		writeJSON(w, http.StatusOK, resolute.TasksResponse{Tasks: list})
	}
}

// taskParam loads {id}, of the route's kind when there is one.
func (s *Server) taskParam(r *http.Request, kind string) (resolute.Task, error) {
	t, err := s.db.Task(r.Context(), chi.URLParam(r, "id"))
	if err == nil && kind != "" && t.Type != kinds[kind] {
		return t, resolute.Errorf(resolute.ENotFound, "%s %s not found", strings.TrimSuffix(kind, "s"), t.ID)
	}
	if err != nil {
		return t, err
	}
	return t, readable(r, authz.Task(t))
}

// handleAPITaskGet serves GET /api/v1/{kind}/{id} and /api/v1/tasks/{id}.
func (s *Server) handleAPITaskGet(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.taskParam(r, kind)
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resolute.TaskResponse{Task: s.withAddress(r, t)})
	}
}

// handleAPITaskKill serves POST /api/v1/{kind}/{id}/kill.
func (s *Server) handleAPITaskKill(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.taskParam(r, kind)
		if err == nil {
			err = s.svc.Tasks.Kill(r.Context(), actorFrom(r), t.ID)
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPITaskSetPriority serves POST /api/v1/{kind}/{id}/set_priority.
func (s *Server) handleAPITaskSetPriority(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.taskParam(r, kind)
		var req struct {
			Priority int `json:"priority"`
		}
		if err == nil {
			err = decodeJSON(r, &req)
		}
		if err == nil {
			err = s.svc.Queue.Update(r.Context(), actorFrom(r), []resolute.QueueControl{{JobID: t.ID, Priority: &req.Priority}})
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

// handleAPITaskLogs serves GET /api/v1/tasks/{id}/logs[?follow=true...].
func (s *Server) handleAPITaskLogs(w http.ResponseWriter, r *http.Request) {
	t, err := s.taskParam(r, "")
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.streamLogs(w, r, t.ID, func() bool {
		t, err := s.db.Task(r.Context(), t.ID)
		return err == nil && t.State == resolute.TaskTerminated
	})
}
