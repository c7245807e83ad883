package handlers

import (
	"net/http"
	"slices"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// The user-group and RBAC API, on Determined's paths. Changes go through
// control.Groups and control.Roles, which ask authz.Can and log each one.

// handleAPIGroupCreate serves POST /api/v1/groups.
func (s *Server) handleAPIGroupCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.GroupRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	g, err := s.svc.Groups.Create(r.Context(), actorFrom(r), req.Name, req.AddUsers)
	s.writeGroup(w, r, g.ID, err)
}

// handleAPIGroupSearch serves POST /api/v1/groups/search.
func (s *Server) handleAPIGroupSearch(w http.ResponseWriter, r *http.Request) {
	var req resolute.GroupSearchRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	list, err := s.db.UserGroups(r.Context(), req.UserID, req.Name)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list = page(list, req.Offset, req.Limit)
	out := resolute.GroupsResponse{Groups: []resolute.GroupSearchResult{}}
	for _, g := range list {
		out.Groups = append(out.Groups, resolute.GroupSearchResult{Group: g, NumMembers: g.NumMembers})
	}
	writeJSON(w, http.StatusOK, out)
}

// page is list[offset:offset+limit], limit 0 meaning the rest.
func page[T any](list []T, offset, limit int) []T {
	offset = min(max(offset, 0), len(list))
	list = list[offset:]
	if limit > 0 && limit < len(list) {
		list = list[:limit]
	}
	return list
}

// handleAPIGroupGet serves GET /api/v1/groups/{groupId}.
func (s *Server) handleAPIGroupGet(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "groupId")
	s.writeGroup(w, r, id, err)
}

// handleAPIGroupUpdate serves PUT and PATCH /api/v1/groups/{groupId}:
// rename, add and remove members.
func (s *Server) handleAPIGroupUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "groupId")
	var req resolute.GroupRequest
	if err == nil {
		err = decodeJSON(r, &req)
	}
	if err == nil {
		_, err = s.svc.Groups.Update(r.Context(), actorFrom(r), id, req.Name, req.AddUsers, req.RemoveUsers)
	}
	s.writeGroup(w, r, id, err)
}

// handleAPIGroupDelete serves DELETE /api/v1/groups/{groupId}.
func (s *Server) handleAPIGroupDelete(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "groupId")
	if err == nil {
		err = s.svc.Groups.Delete(r.Context(), actorFrom(r), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// writeGroup answers with group id and its members, or err.
func (s *Server) writeGroup(w http.ResponseWriter, r *http.Request, id int64, err error) {
	var g resolute.UserGroup
	if err == nil {
		g, err = s.db.UserGroup(r.Context(), id)
	}
	var users []resolute.User
	if err == nil {
		users, err = s.db.UserGroupMembers(r.Context(), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.GroupResponse{Group: resolute.GroupDetails{GroupID: g.ID, Name: g.Name, Users: users}})
}

// apiRole is a built-in role as the API shows it.
func apiRole(info authz.RoleInfo) resolute.Role {
	out := resolute.Role{RoleID: info.ID, Name: string(info.Name),
		ScopeTypeMask: resolute.ScopeTypeMask{Cluster: true, Workspace: !info.GlobalOnly}}
	for _, p := range info.Permissions {
		out.Permissions = append(out.Permissions, resolute.RolePermission{Name: string(p), ScopeTypeMask: out.ScopeTypeMask})
	}
	return out
}

// handleAPIRoleSearch serves POST /api/v1/roles/search: every built-in
// role with its permissions.
func (s *Server) handleAPIRoleSearch(w http.ResponseWriter, r *http.Request) {
	out := resolute.RolesResponse{}
	for _, info := range authz.Roles() {
		out.Roles = append(out.Roles, apiRole(info))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIRolesByID serves POST /api/v1/roles/search/by-ids: roles with
// everyone who holds them.
func (s *Server) handleAPIRolesByID(w http.ResponseWriter, r *http.Request) {
	var req resolute.RolesByIDRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	s.writeRolesHeld(w, r, db.AssignmentFilter{}, func(info authz.RoleInfo) bool { return slices.Contains(req.RoleIDs, info.ID) })
}

// handleAPIRolesByUser serves GET /api/v1/roles/search/by-user/{userId}:
// the roles assigned to the user themselves.
func (s *Server) handleAPIRolesByUser(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "userId")
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.writeRolesHeld(w, r, db.AssignmentFilter{UserID: &id}, nil)
}

// handleAPIRolesByGroup serves GET /api/v1/roles/search/by-group/{groupId}.
func (s *Server) handleAPIRolesByGroup(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "groupId")
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.writeRolesHeld(w, r, db.AssignmentFilter{GroupID: &id}, nil)
}

// writeRolesHeld answers with the roles that have assignments under f
// (or, with keep, the roles keep keeps, held or not), and those
// assignments.
func (s *Server) writeRolesHeld(w http.ResponseWriter, r *http.Request, f db.AssignmentFilter, keep func(authz.RoleInfo) bool) {
	list, err := s.db.RoleAssignments(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := resolute.RolesWithAssignmentsResponse{Roles: []resolute.RoleWithAssignments{}}
	for _, info := range authz.Roles() {
		rw := resolute.RoleWithAssignments{Role: apiRole(info), GroupRoleAssignments: []resolute.GroupRoleAssignment{},
			UserRoleAssignments: []resolute.UserRoleAssignment{}}
		for _, a := range list {
			if a.Role != string(info.Name) {
				continue
			}
			spec := resolute.RoleAssignmentSpec{Role: resolute.RoleRef{RoleID: info.ID, Name: a.Role},
				ScopeWorkspaceID: a.WorkspaceID, ScopeCluster: a.WorkspaceID == nil}
			if a.GroupID != nil {
				rw.GroupRoleAssignments = append(rw.GroupRoleAssignments,
					resolute.GroupRoleAssignment{GroupID: *a.GroupID, GroupName: a.GroupName, RoleAssignment: spec})
			} else {
				rw.UserRoleAssignments = append(rw.UserRoleAssignments,
					resolute.UserRoleAssignment{UserID: *a.UserID, Username: a.Username, RoleAssignment: spec})
			}
		}
		held := len(rw.GroupRoleAssignments)+len(rw.UserRoleAssignments) > 0
		if keep != nil && keep(info) || keep == nil && held {
			out.Roles = append(out.Roles, rw)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIRoleAssign serves POST /api/v1/roles/add-assignments and
// /remove-assignments.
func (s *Server) handleAPIRoleAssign(grant bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req resolute.AssignRolesRequest
		if err := decodeJSON(r, &req); err != nil {
			s.error(w, r, err)
			return
		}
		var as []control.Assignment
		for _, g := range req.GroupRoleAssignments {
			as = append(as, assignment(g.RoleAssignment, 0, g.GroupID))
		}
		for _, u := range req.UserRoleAssignments {
			as = append(as, assignment(u.RoleAssignment, u.UserID, 0))
		}
		var err error
		if grant {
			err = s.svc.Roles.Assign(r.Context(), actorFrom(r), as)
		} else {
			err = s.svc.Roles.Unassign(r.Context(), actorFrom(r), as)
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

func assignment(spec resolute.RoleAssignmentSpec, userID, groupID int64) control.Assignment {
	a := control.Assignment{Role: spec.Role.Name, UserID: userID, GroupID: groupID}
	if spec.Role.RoleID != 0 {
		a.Role = itoa(int64(spec.Role.RoleID))
	}
	if spec.ScopeWorkspaceID != nil {
		a.WorkspaceID = *spec.ScopeWorkspaceID
	}
	return a
}

// handleAPIPermissionsSummary serves GET /api/v1/permissions/summary: the
// caller's roles, their groups' included, and where each holds.
func (s *Server) handleAPIPermissionsSummary(w http.ResponseWriter, r *http.Request) {
	u, _ := userFrom(r)
	p, err := s.svc.Roles.Permissions(r.Context(), u.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if u.Admin && !slices.Contains(p.Global, authz.ClusterAdmin) {
		p.Global = append(p.Global, authz.ClusterAdmin)
	}
	out := resolute.PermissionsSummary{Roles: []resolute.Role{}, Assignments: []resolute.RoleAssignmentSummary{}, AuthzType: "basic"}
	if s.svc.Roles.RBAC() {
		out.AuthzType = "rbac"
	}
	for _, info := range authz.Roles() {
		sum := resolute.RoleAssignmentSummary{RoleID: info.ID, ScopeWorkspaceIDs: []int64{}, IsGlobal: slices.Contains(p.Global, info.Name)}
		for ws, roles := range p.Workspaces {
			if slices.Contains(roles, info.Name) {
				sum.ScopeWorkspaceIDs = append(sum.ScopeWorkspaceIDs, ws)
			}
		}
		slices.Sort(sum.ScopeWorkspaceIDs)
		if sum.IsGlobal || len(sum.ScopeWorkspaceIDs) > 0 {
			out.Roles = append(out.Roles, apiRole(info))
			out.Assignments = append(out.Assignments, sum)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAPIWorkspaceMembers serves GET /api/v1/roles/workspace/{workspaceId}:
// the role assignments in a workspace, for those who may read it.
func (s *Server) handleAPIWorkspaceMembers(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "workspaceId")
	var list []resolute.RoleAssignment
	if err == nil {
		list, err = s.svc.Roles.Members(r.Context(), actorFrom(r), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if list == nil {
		list = []resolute.RoleAssignment{}
	}
	writeJSON(w, http.StatusOK, resolute.WorkspaceMembersResponse{Assignments: list})
}
