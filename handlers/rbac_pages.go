package handlers

import (
	"net/http"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// The pages of RBAC: a workspace's Members tab, and the administrators'
// user groups. They call the same services as the API.

// workspaceRoles are the roles that can be assigned in a workspace.
func workspaceRoles() []string {
	var out []string
	for _, r := range authz.Roles() {
		if !r.GlobalOnly {
			out = append(out, string(r.Name))
		}
	}
	return out
}

// handleWorkspaceMembersPage serves GET /workspaces/{id}/members.
func (s *Server) handleWorkspaceMembersPage(w http.ResponseWriter, r *http.Request) {
	s.renderMembers(w, r, http.StatusOK, views.MemberForm{Role: string(authz.Viewer)})
}

func (s *Server) renderMembers(w http.ResponseWriter, r *http.Request, status int, form views.MemberForm) {
	ws, err := s.workspaceParam(r)
	var members []resolute.RoleAssignment
	if err == nil {
		members, err = s.svc.Roles.Members(r.Context(), actorFrom(r), ws.ID)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.WorkspaceMembersView(views.WorkspaceMembers{
		Shell: s.shell(r, ws.Name+" · Members", "workspaces"), Workspace: ws, Members: members, Roles: workspaceRoles(),
		CanManage: authz.Can(actorFrom(r), authz.AssignRoles, authz.Workspace(ws)) == nil, RBAC: s.svc.Roles.RBAC(),
		Form: form}))
}

// principal finds the user or group a form names: kind "user" or "group".
func (s *Server) principal(r *http.Request, kind, name string) (userID, groupID int64, err error) {
	if kind == "group" {
		gs, err := s.db.UserGroups(r.Context(), 0, name)
		if err != nil {
			return 0, 0, err
		}
		if len(gs) == 0 {
			return 0, 0, resolute.Errorf(resolute.ENotFound, "there is no group %q", name)
		}
		return 0, gs[0].ID, nil
	}
	u, err := s.db.UserByUsername(r.Context(), name)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return 0, 0, resolute.Errorf(resolute.ENotFound, "there is no user %q", name)
	}
	return u.ID, 0, err
}

// handleWorkspaceMemberAddForm serves POST /workspaces/{id}/members: grant
// a role in the workspace to a user or group named in the form.
func (s *Server) handleWorkspaceMemberAddForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	form := views.MemberForm{Kind: r.PostFormValue("kind"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Role: r.PostFormValue("role")}
	uid, gid, err := s.principal(r, form.Kind, form.Name)
	if err == nil {
		err = s.svc.Roles.Assign(r.Context(), actorFrom(r), []control.Assignment{{Role: form.Role, UserID: uid, GroupID: gid, WorkspaceID: id}})
	}
	switch resolute.ErrorCode(err) {
	case "":
		redirect(w, r, "/workspaces/"+itoa(id)+"/members", "ok", "Granted "+form.Role+" to "+form.Name+".")
	case resolute.EInvalid, resolute.ENotFound:
		form.Errors = views.FormErrors{"name": sentence(resolute.ErrorMessage(err))}
		s.renderMembers(w, r, http.StatusUnprocessableEntity, form)
	default:
		s.error(w, r, err)
	}
}

// handleWorkspaceMemberRemoveForm serves POST /workspaces/{id}/members/remove:
// revoke one assignment in the workspace.
func (s *Server) handleWorkspaceMemberRemoveForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	a := control.Assignment{Role: r.PostFormValue("role"), WorkspaceID: id}
	if err == nil && r.PostFormValue("user_id") != "" {
		a.UserID, err = positiveID("user_id", r.PostFormValue("user_id"))
	} else if err == nil {
		a.GroupID, err = positiveID("group_id", r.PostFormValue("group_id"))
	}
	if err == nil {
		err = s.svc.Roles.Unassign(r.Context(), actorFrom(r), []control.Assignment{a})
	}
	s.taskFormDone(w, r, err, "/workspaces/"+itoa(id)+"/members", "Revoked "+a.Role+".")
}

// handleGroupListPage serves GET /admin/groups.
func (s *Server) handleGroupListPage(w http.ResponseWriter, r *http.Request) {
	s.renderGroupList(w, r, http.StatusOK, views.MemberForm{})
}

func (s *Server) renderGroupList(w http.ResponseWriter, r *http.Request, status int, form views.MemberForm) {
	groups, err := s.db.UserGroups(r.Context(), 0, "")
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.GroupListPage(views.GroupList{Shell: s.shell(r, "Groups", "admin"), Groups: groups, Form: form}))
}

// handleGroupCreateForm serves POST /admin/groups.
func (s *Server) handleGroupCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	g, err := s.svc.Groups.Create(r.Context(), actorFrom(r), name, nil)
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		s.renderGroupList(w, r, http.StatusUnprocessableEntity, views.MemberForm{Name: name, Errors: views.FormErrors{"name": fieldMessage(err)}})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, groupPath(g.ID), "ok", "Created group "+g.Name+".")
}

func groupPath(id int64) string { return "/admin/groups/" + itoa(id) }

// handleGroupPage serves GET /admin/groups/{id}.
func (s *Server) handleGroupPage(w http.ResponseWriter, r *http.Request) {
	s.renderGroup(w, r, http.StatusOK, nil)
}

func (s *Server) renderGroup(w http.ResponseWriter, r *http.Request, status int, errs views.FormErrors) {
	id, err := idParam(r, "id")
	p := views.GroupPage{Errors: errs}
	if err == nil {
		p.Group, err = s.db.UserGroup(r.Context(), id)
	}
	if err == nil {
		p.Members, err = s.db.UserGroupMembers(r.Context(), id)
	}
	if err == nil {
		p.Roles, err = s.db.RoleAssignments(r.Context(), db.AssignmentFilter{GroupID: &id})
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	for _, info := range authz.Roles() {
		p.AllRoles = append(p.AllRoles, string(info.Name))
	}
	p.Shell = s.shell(r, "Group "+p.Group.Name, "admin")
	clearFlash(w, r)
	s.render(w, r, status, views.GroupView(p))
}

// handleGroupRenameForm serves POST /admin/groups/{id}.
func (s *Server) handleGroupRenameForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err == nil {
		_, err = s.svc.Groups.Update(r.Context(), actorFrom(r), id, strings.TrimSpace(r.PostFormValue("name")), nil, nil)
	}
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		s.renderGroup(w, r, http.StatusUnprocessableEntity, views.FormErrors{"name": fieldMessage(err)})
		return
	}
	s.taskFormDone(w, r, err, groupPath(id), "Renamed the group.")
}

// handleGroupMemberForm serves POST /admin/groups/{id}/members and
// /members/remove: add or remove the user the form names.
func (s *Server) handleGroupMemberForm(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := idAndForm(r)
		name := strings.TrimSpace(r.PostFormValue("username"))
		var uid int64
		if err == nil {
			uid, _, err = s.principal(r, "user", name)
		}
		msg := "Added " + name + "."
		if err == nil && add {
			_, err = s.svc.Groups.Update(r.Context(), actorFrom(r), id, "", []int64{uid}, nil)
		} else if err == nil {
			_, err = s.svc.Groups.Update(r.Context(), actorFrom(r), id, "", nil, []int64{uid})
			msg = "Removed " + name + "."
		}
		s.taskFormDone(w, r, err, groupPath(id), msg)
	}
}

// handleGroupDeleteForm serves POST /admin/groups/{id}/delete.
func (s *Server) handleGroupDeleteForm(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err == nil {
		err = s.svc.Groups.Delete(r.Context(), actorFrom(r), id)
	}
	s.taskFormDone(w, r, err, "/admin/groups", "Deleted the group.")
}

// handleGroupRoleForm serves POST /admin/groups/{id}/roles and
// /roles/remove: grant or revoke a cluster-wide role of the group.
func (s *Server) handleGroupRoleForm(grant bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := idAndForm(r)
		a := []control.Assignment{{Role: r.PostFormValue("role"), GroupID: id}}
		msg := "Granted " + a[0].Role + " cluster-wide."
		if err == nil && grant {
			err = s.svc.Roles.Assign(r.Context(), actorFrom(r), a)
		} else if err == nil {
			err = s.svc.Roles.Unassign(r.Context(), actorFrom(r), a)
			msg = "Revoked " + a[0].Role + "."
		}
		s.taskFormDone(w, r, err, groupPath(id), msg)
	}
}
