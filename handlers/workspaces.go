package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// archivedFilter reads ?archived=true|false; absent means all.
func archivedFilter(r *http.Request) (*bool, error) {
	switch v := r.URL.Query().Get("archived"); v {
	case "":
		return nil, nil
	case "true", "1":
		t := true
		return &t, nil
	case "false", "0":
		f := false
		return &f, nil
	default:
		return nil, resolute.Errorf(resolute.EInvalid, "archived: expected true or false, got %q", v)
	}
}

// handleAPIWorkspaceList serves GET /api/v1/workspaces[?archived=].
func (s *Server) handleAPIWorkspaceList(w http.ResponseWriter, r *http.Request) {
	archived, err := archivedFilter(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := s.db.WorkspacesFor(r.Context(), archived, viewer(r, authz.ViewWorkspace))
	if err != nil {
		s.error(w, r, err)
		return
	}
	if name := r.URL.Query().Get("name"); name != "" {
		list = filterWorkspaces(list, name)
	}
	writeJSON(w, http.StatusOK, resolute.WorkspacesResponse{Workspaces: list})
}

func filterWorkspaces(list []resolute.Workspace, name string) []resolute.Workspace {
	out := []resolute.Workspace{}
	for _, ws := range list {
		if ws.Name == name {
			out = append(out, ws)
		}
	}
	return out
}

// handleAPIWorkspaceCreate serves POST /api/v1/workspaces: a name, and
// any of the settings (Determined's PostWorkspaceRequest).
func (s *Server) handleAPIWorkspaceCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.WorkspaceRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	p, err := control.PatchOf(req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if p.Name == nil {
		p.Name = new(string)
	}
	ws, err := s.svc.WorkspaceSettings.Create(r.Context(), actorFrom(r), p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.WorkspaceResponse{Workspace: ws})
}

// workspaceParam loads the workspace of {id}, if the requester may see it.
func (s *Server) workspaceParam(r *http.Request) (resolute.Workspace, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Workspace{}, err
	}
	ws, err := s.db.Workspace(r.Context(), id)
	if err != nil {
		return ws, err
	}
	return ws, readable(r, authz.Workspace(ws))
}

// handleAPIWorkspaceGet serves GET /api/v1/workspaces/{id}.
func (s *Server) handleAPIWorkspaceGet(w http.ResponseWriter, r *http.Request) {
	ws, err := s.workspaceParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.WorkspaceResponse{Workspace: ws})
}

// handleAPIWorkspacePatch serves PATCH /api/v1/workspaces/{id}: its name
// and settings (Determined's PatchWorkspace).
func (s *Server) handleAPIWorkspacePatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.WorkspaceRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p, err := control.PatchOf(req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ws, err := s.svc.WorkspaceSettings.Set(r.Context(), actorFrom(r), id, p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.WorkspaceResponse{Workspace: ws})
}

// handleAPIWorkspaceDelete serves DELETE /api/v1/workspaces/{id}.
func (s *Server) handleAPIWorkspaceDelete(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Workspaces.Delete(ctx, actorFrom(r), id) })
}

// handleAPIWorkspaceArchive serves POST /api/v1/workspaces/{id}/archive and
// /unarchive.
func (s *Server) handleAPIWorkspaceArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.apiByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Workspaces.SetArchived(ctx, actorFrom(r), id, archived)
		})
	}
}

// handleAPIWorkspaceProjects serves GET /api/v1/workspaces/{id}/projects.
func (s *Server) handleAPIWorkspaceProjects(w http.ResponseWriter, r *http.Request) {
	ws, err := s.workspaceParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	id := ws.ID
	s.writeProjects(w, r, db.ProjectFilter{WorkspaceID: &id})
}

// handleWorkspaceListPage serves GET /workspaces[?archived=1].
func (s *Server) handleWorkspaceListPage(w http.ResponseWriter, r *http.Request) {
	s.renderWorkspaceList(w, r, http.StatusOK, views.WorkspaceForm{})
}

func (s *Server) renderWorkspaceList(w http.ResponseWriter, r *http.Request, status int, form views.WorkspaceForm) {
	showArchived := r.URL.Query().Get("archived") != ""
	var filter *bool
	if !showArchived {
		f := false
		filter = &f
	}
	list, err := s.db.WorkspacesFor(r.Context(), filter, viewer(r, authz.ViewWorkspace))
	if err != nil {
		s.error(w, r, err)
		return
	}
	activity, err := s.workspaceActivity(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.WorkspaceListPage(views.WorkspaceList{
		Shell: s.shell(r, "Workspaces", "workspaces"), Workspaces: list, Activity: activity, ShowArchived: showArchived, Form: form}))
}

// handleWorkspaceCreateForm serves POST /workspaces.
func (s *Server) handleWorkspaceCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	ws, err := s.svc.Workspaces.Create(r.Context(), actorFrom(r), name)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		s.renderWorkspaceList(w, r, http.StatusUnprocessableEntity, views.WorkspaceForm{Name: name, Errors: views.FormErrors{"name": fieldMessage(err)}})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/workspaces/"+itoa(ws.ID), "ok", "Created workspace "+ws.Name+".")
}

// handleWorkspacePage serves GET /workspaces/{id}[?…the experiment list's
// query]: its projects and its experiments.
func (s *Server) handleWorkspacePage(w http.ResponseWriter, r *http.Request) {
	s.renderWorkspace(w, r, http.StatusOK, views.ProjectForm{}, views.WorkspaceForm{})
}

func (s *Server) renderWorkspace(w http.ResponseWriter, r *http.Request, status int, form views.ProjectForm, rename views.WorkspaceForm) {
	ws, err := s.workspaceParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	id := ws.ID
	projects, err := s.db.Projects(r.Context(), db.ProjectFilter{WorkspaceID: &id})
	if err != nil {
		s.error(w, r, err)
		return
	}
	if rename.Name == "" && rename.Errors == nil {
		rename.Name = ws.Name
	}
	activity, err := s.projectActivity(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	scope := views.ExperimentQuery{Path: workspacePath(id), WorkspaceID: id}
	var b views.ExperimentBrowser
	if r.Method == http.MethodGet {
		var ok bool
		if b, ok = s.experimentBrowser(w, r, scope); !ok {
			return
		}
	} else if b, err = s.defaultExperimentBrowser(r, scope); err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.WorkspaceView(views.WorkspacePage{
		Shell: s.shell(r, ws.Name, "workspaces"), Workspace: ws, Projects: projects, Activity: activity, Browser: b,
		Form: form, Rename: rename}))
}

// handleWorkspaceRenameForm serves POST /workspaces/{id}/rename.
func (s *Server) handleWorkspaceRenameForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	_, err = s.svc.Workspaces.Rename(r.Context(), actorFrom(r), id, name)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		s.renderWorkspace(w, r, http.StatusUnprocessableEntity, views.ProjectForm{}, views.WorkspaceForm{Name: name, Errors: views.FormErrors{"name": fieldMessage(err)}})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/workspaces/"+itoa(id), "ok", "Renamed the workspace to "+name+".")
}

func workspacePath(id int64) string { return "/workspaces/" + itoa(id) }

// handleWorkspaceArchiveForm serves POST /workspaces/{id}/archive and /unarchive.
func (s *Server) handleWorkspaceArchiveForm(archived bool) http.HandlerFunc {
	msg := "Archived the workspace."
	if !archived {
		msg = "Unarchived the workspace."
	}
	return func(w http.ResponseWriter, r *http.Request) {
		s.formByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Workspaces.SetArchived(ctx, actorFrom(r), id, archived)
		}, workspacePath, workspacePath, msg)
	}
}

// handleWorkspaceDeleteForm serves POST /workspaces/{id}/delete.
func (s *Server) handleWorkspaceDeleteForm(w http.ResponseWriter, r *http.Request) {
	s.formByID(w, r, func(ctx context.Context, id int64) error { return s.svc.Workspaces.Delete(ctx, actorFrom(r), id) }, workspacePath, func(int64) string { return "/workspaces" }, "Deleted the workspace.")
}
