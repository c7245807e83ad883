package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// UserGroups lists groups by name; memberID, when not 0, only those it is
// a member of; name, when not "", only the one so called.
func (q *Queries) UserGroups(ctx context.Context, memberID int64, name string) ([]resolute.UserGroup, error) {
	p := gen.ListUserGroupsParams{Name: nonEmpty(name)}
	if memberID != 0 {
		p.MemberID = &memberID
	}
	rows, err := q.q.ListUserGroups(ctx, p)
	if err != nil {
		return nil, translate(err, "user groups")
	}
	out := make([]resolute.UserGroup, len(rows))
	for i, r := range rows {
		out[i] = resolute.UserGroup{ID: r.ID, Name: r.Name, NumMembers: int(r.NumMembers), CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// UserGroup returns the group with id.
func (q *Queries) UserGroup(ctx context.Context, id int64) (resolute.UserGroup, error) {
	r, err := q.q.GetUserGroup(ctx, id)
	return resolute.UserGroup{ID: r.ID, Name: r.Name, NumMembers: int(r.NumMembers), CreatedAt: r.CreatedAt},
		translate(err, "user group %d", id)
}

// UserGroupForUpdate locks the group with id until the transaction ends.
func (q *Queries) UserGroupForUpdate(ctx context.Context, id int64) (resolute.UserGroup, error) {
	r, err := q.q.GetUserGroupForUpdate(ctx, id)
	return resolute.UserGroup{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt}, translate(err, "user group %d", id)
}

// CreateUserGroup adds a group and returns its id.
func (q *Queries) CreateUserGroup(ctx context.Context, name string) (int64, error) {
	id, err := q.q.CreateUserGroup(ctx, name)
	return id, translate(err, "user group %q", name)
}

// RenameUserGroup renames a group.
func (q *Queries) RenameUserGroup(ctx context.Context, id int64, name string) error {
	return translate(q.q.RenameUserGroup(ctx, gen.RenameUserGroupParams{ID: id, Name: name}), "user group %q", name)
}

// DeleteUserGroup deletes a group, its memberships and its role
// assignments.
func (q *Queries) DeleteUserGroup(ctx context.Context, id int64) error {
	return translate(q.q.DeleteUserGroup(ctx, id), "user group %d", id)
}

// AddUserGroupMember adds a user to a group; false when they were one.
func (q *Queries) AddUserGroupMember(ctx context.Context, groupID, userID int64) (bool, error) {
	n, err := q.q.AddUserGroupMember(ctx, gen.AddUserGroupMemberParams{GroupID: groupID, UserID: userID})
	return n > 0, translate(err, "member %d of user group %d", userID, groupID)
}

// RemoveUserGroupMember removes a user from a group; false when they were
// none.
func (q *Queries) RemoveUserGroupMember(ctx context.Context, groupID, userID int64) (bool, error) {
	n, err := q.q.RemoveUserGroupMember(ctx, gen.RemoveUserGroupMemberParams{GroupID: groupID, UserID: userID})
	return n > 0, translate(err, "member %d of user group %d", userID, groupID)
}

// UserGroupMembers lists a group's users by name.
func (q *Queries) UserGroupMembers(ctx context.Context, groupID int64) ([]resolute.User, error) {
	rows, err := q.q.ListUserGroupMembers(ctx, groupID)
	if err != nil {
		return nil, translate(err, "members of user group %d", groupID)
	}
	out := make([]resolute.User, len(rows))
	for i, r := range rows {
		out[i] = toUser(r)
	}
	return out, nil
}

// CreateRoleAssignment assigns a role to a user or a group (one of the
// two ids), in workspace ws or cluster-wide (nil); false when it was.
func (q *Queries) CreateRoleAssignment(ctx context.Context, role string, userID, groupID, ws *int64) (bool, error) {
	n, err := q.q.CreateRoleAssignment(ctx, gen.CreateRoleAssignmentParams{Role: role, UserID: userID, GroupID: groupID,
		WorkspaceID: ws})
	return n > 0, translate(err, "role assignment")
}

// DeleteRoleAssignment removes an assignment; false when there was none.
func (q *Queries) DeleteRoleAssignment(ctx context.Context, role string, userID, groupID, ws *int64) (bool, error) {
	n, err := q.q.DeleteRoleAssignment(ctx, gen.DeleteRoleAssignmentParams{Role: role, UserID: userID, GroupID: groupID,
		WorkspaceID: ws})
	return n > 0, translate(err, "role assignment")
}

// AssignmentFilter selects role assignments; zero fields select all.
type AssignmentFilter struct {
	Role                         string
	UserID, GroupID, WorkspaceID *int64
	// ClusterOnly selects only cluster-wide assignments.
	ClusterOnly bool
}

// RoleAssignments lists assignments under f, cluster-wide ones first.
func (q *Queries) RoleAssignments(ctx context.Context, f AssignmentFilter) ([]resolute.RoleAssignment, error) {
	rows, err := q.q.ListRoleAssignments(ctx, gen.ListRoleAssignmentsParams{Role: nonEmpty(f.Role), UserID: f.UserID,
		GroupID: f.GroupID, WorkspaceID: f.WorkspaceID, ClusterOnly: f.ClusterOnly})
	if err != nil {
		return nil, translate(err, "role assignments")
	}
	out := make([]resolute.RoleAssignment, len(rows))
	for i, r := range rows {
		out[i] = resolute.RoleAssignment{ID: r.ID, Role: r.Role, UserID: r.UserID, Username: r.Username, GroupID: r.GroupID,
			GroupName: r.GroupName, WorkspaceID: r.WorkspaceID, WorkspaceName: r.WorkspaceName}
	}
	return out, nil
}

// HeldRole is a role a user holds, by their own assignment or a group's,
// in a workspace or cluster-wide (WorkspaceID 0).
type HeldRole struct {
	Role        string
	WorkspaceID int64
}

// UserRoles lists the roles a user holds, their groups' too.
func (q *Queries) UserRoles(ctx context.Context, userID int64) ([]HeldRole, error) {
	rows, err := q.q.ListUserRoles(ctx, &userID)
	if err != nil {
		return nil, translate(err, "roles of user %d", userID)
	}
	out := make([]HeldRole, len(rows))
	for i, r := range rows {
		out[i] = HeldRole{Role: r.Role}
		if r.WorkspaceID != nil {
			out[i].WorkspaceID = *r.WorkspaceID
		}
	}
	return out, nil
}
