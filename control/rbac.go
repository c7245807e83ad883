package control

import (
	"context"
	"log/slog"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// Roles grants and revokes the built-in roles (RBAC), and tells each
// signed-in user's Actor their roles when security.authz.type is rbac.
// Every grant and revoke leaves a line in the master log naming who did it.
//
// Assignments can be made under basic authorization too (by
// administrators), so that a cluster is set up before RBAC is switched
// on; only under rbac do they decide anything.
type Roles struct {
	db     *db.DB
	logger *slog.Logger
	rbac   bool
}

// RBAC says whether roles decide permissions (security.authz.type: rbac).
func (s *Roles) RBAC() bool { return s.rbac }

// ActorOf is the Actor of signed-in user u: under RBAC with the roles they
// and their groups hold, read now (each request reads them afresh, so a
// grant or revoke counts from the next request on).
func (s *Roles) ActorOf(ctx context.Context, u resolute.User) (authz.Actor, error) {
	if !s.rbac {
		return authz.User(u), nil
	}
	held, err := s.db.UserRoles(ctx, u.ID)
	if err != nil {
		return authz.Actor{}, err
	}
	return authz.RBACUser(u, permissionsOf(held)), nil
}

// Permissions are the roles a user holds, for `det rbac my-permissions`
// and the pages: under basic too (what they would hold under rbac).
func (s *Roles) Permissions(ctx context.Context, userID int64) (authz.Permissions, error) {
	held, err := s.db.UserRoles(ctx, userID)
	return permissionsOf(held), err
}

func permissionsOf(held []db.HeldRole) authz.Permissions {
	p := authz.Permissions{Workspaces: map[int64][]authz.Role{}}
	for _, h := range held {
		if h.WorkspaceID == 0 {
			p.Global = append(p.Global, authz.Role(h.Role))
		} else {
			p.Workspaces[h.WorkspaceID] = append(p.Workspaces[h.WorkspaceID], authz.Role(h.Role))
		}
	}
	return p
}

// Assignment names one role assignment to grant or revoke: a role (by name
// or Determined's id) to a user or a group (one of the two ids), in a
// workspace or cluster-wide (WorkspaceID 0).
type Assignment struct {
	Role        string
	UserID      int64
	GroupID     int64
	WorkspaceID int64
}

// Assign grants each assignment, all or none: cluster-wide ones by
// administrators (ClusterAdmin), a workspace's also by its WorkspaceAdmins.
// Granting what is already held changes nothing.
func (s *Roles) Assign(ctx context.Context, a authz.Actor, as []Assignment) error {
	return s.change(ctx, a, as, true)
}

// Unassign revokes each assignment, all or none, as Assign grants them; one
// that does not exist is not_found.
func (s *Roles) Unassign(ctx context.Context, a authz.Actor, as []Assignment) error {
	return s.change(ctx, a, as, false)
}

func (s *Roles) change(ctx context.Context, a authz.Actor, as []Assignment, grant bool) error {
	if len(as) == 0 {
		return resolute.Errorf(resolute.EInvalid, "no role assignment given")
	}
	var done []resolute.RoleAssignment
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		done = done[:0]
		for _, x := range as {
			ra, err := checkAssignment(ctx, q, a, x)
			if err != nil {
				return err
			}
			var changed bool
			if grant {
				changed, err = q.CreateRoleAssignment(ctx, ra.Role, ra.UserID, ra.GroupID, ra.WorkspaceID)
			} else {
				changed, err = q.DeleteRoleAssignment(ctx, ra.Role, ra.UserID, ra.GroupID, ra.WorkspaceID)
				if err == nil && !changed {
					return resolute.Errorf(resolute.ENotFound, "%s does not hold role %s %s", ra.Principal(), ra.Role, ra.Scope())
				}
			}
			if err != nil {
				return err
			}
			if changed {
				done = append(done, ra)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	msg := "role assigned"
	if !grant {
		msg = "role unassigned"
	}
	for _, ra := range done {
		s.logger.Info(msg, "role", ra.Role, "to", ra.Principal(), "scope", ra.Scope(), "by", a.Username())
	}
	return nil
}

// checkAssignment resolves x's role, principal and workspace, and asks
// whether a may assign roles there.
func checkAssignment(ctx context.Context, q *db.Queries, a authz.Actor, x Assignment) (resolute.RoleAssignment, error) {
	var ra resolute.RoleAssignment
	role, ok := authz.RoleByName(x.Role)
	if !ok {
		return ra, resolute.Errorf(resolute.ENotFound, "there is no role %q; `det rbac list-roles` lists them", x.Role)
	}
	ra.Role = string(role.Name)
	switch {
	case (x.UserID == 0) == (x.GroupID == 0):
		return ra, resolute.Errorf(resolute.EInvalid, "a role is assigned to a user or to a group: give one of the two")
	case x.UserID != 0:
		u, err := q.User(ctx, x.UserID)
		if err != nil {
			return ra, err
		}
		ra.UserID, ra.Username = &u.ID, u.Username
	default:
		g, err := q.UserGroup(ctx, x.GroupID)
		if err != nil {
			return ra, err
		}
		ra.GroupID, ra.GroupName = &g.ID, g.Name
	}
	if x.WorkspaceID == 0 {
		return ra, authz.Can(a, authz.AssignRoles, authz.Cluster)
	}
	if role.GlobalOnly {
		return ra, resolute.Errorf(resolute.EInvalid, "role %s is assigned cluster-wide only, not in a workspace", role.Name)
	}
	w, err := q.Workspace(ctx, x.WorkspaceID)
	if err != nil {
		return ra, err
	}
	ra.WorkspaceID, ra.WorkspaceName = &w.ID, w.Name
	return ra, authz.Can(a, authz.AssignRoles, authz.Workspace(w))
}

// Members lists the assignments in workspace ws, for its Members tab:
// those who may read the workspace.
func (s *Roles) Members(ctx context.Context, a authz.Actor, ws int64) ([]resolute.RoleAssignment, error) {
	w, err := s.db.Workspace(ctx, ws)
	if err != nil {
		return nil, err
	}
	if err := authz.Can(a, authz.Read, authz.Workspace(w)); err != nil {
		return nil, err
	}
	return s.db.RoleAssignments(ctx, db.AssignmentFilter{WorkspaceID: &ws})
}

// Groups creates, renames and deletes user groups and changes their
// members: administrators (ClusterAdmin) only. Every change of membership
// leaves a line in the master log naming who made it.
type Groups struct {
	db     *db.DB
	logger *slog.Logger
}

// Create adds a group called name with the users addUsers.
func (s *Groups) Create(ctx context.Context, a authz.Actor, name string, addUsers []int64) (resolute.UserGroup, error) {
	if err := CheckName("name", name, MaxNameLen); err != nil {
		return resolute.UserGroup{}, err
	}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return resolute.UserGroup{}, err
	}
	var id int64
	var added []string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		var err error
		if id, err = q.CreateUserGroup(ctx, name); err != nil {
			return err
		}
		added, err = addMembers(ctx, q, id, addUsers)
		return err
	})
	if err != nil {
		return resolute.UserGroup{}, err
	}
	s.logger.Info("user group created", "group", name, "by", a.Username())
	for _, u := range added {
		s.logger.Info("user group member added", "group", name, "user", u, "by", a.Username())
	}
	return s.db.UserGroup(ctx, id)
}

// Update renames group id (name "" keeps it) and adds and removes members.
func (s *Groups) Update(ctx context.Context, a authz.Actor, id int64, name string, addUsers, removeUsers []int64) (resolute.UserGroup, error) {
	if name != "" {
		if err := CheckName("name", name, MaxNameLen); err != nil {
			return resolute.UserGroup{}, err
		}
	}
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return resolute.UserGroup{}, err
	}
	var g resolute.UserGroup
	var added, removed []string
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		var err error
		if g, err = q.UserGroupForUpdate(ctx, id); err != nil {
			return err
		}
		if name != "" && name != g.Name {
			if err := q.RenameUserGroup(ctx, id, name); err != nil {
				return err
			}
		}
		if added, err = addMembers(ctx, q, id, addUsers); err != nil {
			return err
		}
		removed = removed[:0]
		for _, uid := range removeUsers {
			u, err := q.User(ctx, uid)
			if err != nil {
				return err
			}
			ok, err := q.RemoveUserGroupMember(ctx, id, uid)
			if err != nil {
				return err
			}
			if !ok {
				return resolute.Errorf(resolute.ENotFound, "user %s is not a member of group %q", u.Username, g.Name)
			}
			removed = append(removed, u.Username)
		}
		return nil
	})
	if err != nil {
		return resolute.UserGroup{}, err
	}
	if name != "" && name != g.Name {
		s.logger.Info("user group renamed", "group", g.Name, "name", name, "by", a.Username())
		g.Name = name
	}
	for _, u := range added {
		s.logger.Info("user group member added", "group", g.Name, "user", u, "by", a.Username())
	}
	for _, u := range removed {
		s.logger.Info("user group member removed", "group", g.Name, "user", u, "by", a.Username())
	}
	return s.db.UserGroup(ctx, id)
}

// Delete deletes group id, its memberships and the roles assigned to it.
func (s *Groups) Delete(ctx context.Context, a authz.Actor, id int64) error {
	if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
		return err
	}
	var g resolute.UserGroup
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		var err error
		if g, err = q.UserGroupForUpdate(ctx, id); err != nil {
			return err
		}
		return q.DeleteUserGroup(ctx, id)
	})
	if err == nil {
		s.logger.Info("user group deleted", "group", g.Name, "by", a.Username())
	}
	return err
}

// addMembers adds users to group id and returns the names of those who
// were not members.
func addMembers(ctx context.Context, q *db.Queries, id int64, users []int64) ([]string, error) {
	var added []string
	for _, uid := range users {
		u, err := q.User(ctx, uid)
		if err != nil {
			return nil, err
		}
		ok, err := q.AddUserGroupMember(ctx, id, uid)
		if err != nil {
			return nil, err
		}
		if ok {
			added = append(added, u.Username)
		}
	}
	return added, nil
}
