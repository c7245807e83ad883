package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// writeProjects answers with the projects matching f and ?archived=.
func (s *Server) writeProjects(w http.ResponseWriter, r *http.Request, f db.ProjectFilter) {
	archived, err := archivedFilter(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	f.Archived = archived
	f.Viewer = viewer(r, authz.ViewProject)
	list, err := s.db.Projects(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ProjectsResponse{Projects: list})
}

// handleAPIProjectList serves GET /api/v1/projects[?workspace_id=&archived=].
func (s *Server) handleAPIProjectList(w http.ResponseWriter, r *http.Request) {
	var f db.ProjectFilter
	if v := r.URL.Query().Get("workspace_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.error(w, r, resolute.Errorf(resolute.EInvalid, "workspace_id: expected an integer, got %q", v))
			return
		}
		f.WorkspaceID = &id
	}
	s.writeProjects(w, r, f)
}

// handleAPIProjectCreate serves POST /api/v1/workspaces/{id}/projects.
func (s *Server) handleAPIProjectCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.ProjectRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if req.Name == nil {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "name: is required"))
		return
	}
	p, err := s.svc.Projects.Create(r.Context(), actorFrom(r), id, *req.Name, deref(req.Description))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ProjectResponse{Project: p})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// projectParam loads the project of {id}, if the requester may see it.
func (s *Server) projectParam(r *http.Request) (resolute.Project, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return resolute.Project{}, err
	}
	p, err := s.db.Project(r.Context(), id)
	if err != nil {
		return p, err
	}
	return p, readable(r, authz.Project(p, 0))
}

// handleAPIProjectGet serves GET /api/v1/projects/{id}.
func (s *Server) handleAPIProjectGet(w http.ResponseWriter, r *http.Request) {
	p, err := s.projectParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ProjectResponse{Project: p})
}

// handleAPIProjectPatch serves PATCH /api/v1/projects/{id}.
func (s *Server) handleAPIProjectPatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.ProjectRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p, err := s.db.Project(r.Context(), id)
	if err == nil {
		err = readable(r, authz.Project(p, 0))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if req.Name != nil {
		p.Name = *req.Name
	}
	if req.Description != nil {
		p.Description = *req.Description
	}
	p, err = s.svc.Projects.Edit(r.Context(), actorFrom(r), id, p.Name, p.Description)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.ProjectResponse{Project: p})
}

// handleAPIProjectDelete serves DELETE /api/v1/projects/{id}.
func (s *Server) handleAPIProjectDelete(w http.ResponseWriter, r *http.Request) {
	s.apiByID(w, r, func(ctx context.Context, id int64) error {
		_, err := s.svc.Projects.Delete(ctx, actorFrom(r), id)
		return err
	})
}

// handleAPIProjectArchive serves POST /api/v1/projects/{id}/archive and /unarchive.
func (s *Server) handleAPIProjectArchive(archived bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.apiByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Projects.SetArchived(ctx, actorFrom(r), id, archived)
		})
	}
}

// handleProjectCreateForm serves POST /workspaces/{id}/projects.
func (s *Server) handleProjectCreateForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	name, desc := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("description"))
	p, err := s.svc.Projects.Create(r.Context(), actorFrom(r), id, name, desc)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		field := "name"
		if strings.HasPrefix(resolute.ErrorMessage(err), "description") {
			field = "description"
		}
		s.renderWorkspace(w, r, http.StatusUnprocessableEntity,
			views.ProjectForm{Name: name, Description: desc, Errors: views.FormErrors{field: fieldMessage(err)}}, views.WorkspaceForm{})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/workspaces/"+itoa(id), "ok", "Created project "+p.Name+".")
}

// handleProjectPage serves GET /projects/{id}[?…the experiment list's
// query]: the project, how busy it is, and its experiments.
func (s *Server) handleProjectPage(w http.ResponseWriter, r *http.Request) {
	p, err := s.projectParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	id := p.ID
	b, ok := s.experimentBrowser(w, r, views.ExperimentQuery{Path: "/projects/" + itoa(id), ProjectID: id})
	if !ok {
		return
	}
	activity, err := s.projectActivity(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.ProjectView(views.ProjectPage{Shell: s.projectShell(r, p), Project: p, Activity: activity[id],
		Browser: b, Form: views.ProjectForm{Name: p.Name, Description: p.Description}}))
}

// handleProjectEditForm serves POST /projects/{id}.
func (s *Server) handleProjectEditForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	name, desc := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("description"))
	_, err = s.svc.Projects.Edit(r.Context(), actorFrom(r), id, name, desc)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		p, perr := s.db.Project(r.Context(), id)
		if perr != nil {
			s.error(w, r, perr)
			return
		}
		field := "name"
		if strings.HasPrefix(resolute.ErrorMessage(err), "description") {
			field = "description"
		}
		b, berr := s.defaultExperimentBrowser(r, views.ExperimentQuery{Path: "/projects/" + itoa(id), ProjectID: id})
		if berr != nil {
			s.error(w, r, berr)
			return
		}
		s.render(w, r, http.StatusUnprocessableEntity, views.ProjectView(views.ProjectPage{Shell: s.projectShell(r, p),
			Project: p, Browser: b, Form: views.ProjectForm{Name: name, Description: desc, Errors: views.FormErrors{field: fieldMessage(err)}}}))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/projects/"+itoa(id), "ok", "Saved the project.")
}

func projectPath(id int64) string { return "/projects/" + itoa(id) }

// handleProjectArchiveForm serves POST /projects/{id}/archive and /unarchive.
func (s *Server) handleProjectArchiveForm(archived bool) http.HandlerFunc {
	msg := "Archived the project."
	if !archived {
		msg = "Unarchived the project."
	}
	return func(w http.ResponseWriter, r *http.Request) {
		s.formByID(w, r, func(ctx context.Context, id int64) error {
			return s.svc.Projects.SetArchived(ctx, actorFrom(r), id, archived)
		}, projectPath, projectPath, msg)
	}
}

// handleProjectDeleteForm serves POST /projects/{id}/delete.
func (s *Server) handleProjectDeleteForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	p, err := s.svc.Projects.Delete(r.Context(), actorFrom(r), id)
	if resolute.ErrorCode(err) == resolute.EConflict {
		redirect(w, r, "/projects/"+itoa(id), "error", resolute.ErrorMessage(err))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/workspaces/"+itoa(p.WorkspaceID), "ok", "Deleted project "+p.Name+".")
}

// projectShell is a project page's shell, with breadcrumbs through its
// workspace.
func (s *Server) projectShell(r *http.Request, p resolute.Project) views.Shell {
	sh := s.shell(r, p.Name, "workspaces")
	sh.Crumbs = []views.Crumb{{Label: "Workspaces", Href: "/workspaces"}, {Label: p.WorkspaceName, Href: "/workspaces/" + itoa(p.WorkspaceID)}}
	return sh
}
