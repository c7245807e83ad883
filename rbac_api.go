package resolute

// The user-group and RBAC API, in Determined's shapes (/api/v1/groups,
// /api/v1/roles, /api/v1/permissions/summary).

// GroupRequest creates a group (POST /api/v1/groups) or renames it and
// changes its members (PUT or PATCH /api/v1/groups/{groupId}).
type GroupRequest struct {
	Name        string  `json:"name"`
	AddUsers    []int64 `json:"addUsers"`
	RemoveUsers []int64 `json:"removeUsers"`
}

// GroupDetails is a group with its members.
type GroupDetails struct {
	GroupID int64  `json:"groupId"`
	Name    string `json:"name"`
	Users   []User `json:"users"`
}

// GroupResponse answers the calls on one group.
type GroupResponse struct {
	Group GroupDetails `json:"group"`
}

// GroupSearchRequest is POST /api/v1/groups/search: the groups of UserID
// (0: all), or the one called Name.
type GroupSearchRequest struct {
	UserID int64  `json:"userId"`
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// GroupSearchResult is one group of a search.
type GroupSearchResult struct {
	Group      UserGroup `json:"group"`
	NumMembers int       `json:"numMembers"`
}

// GroupsResponse lists groups.
type GroupsResponse struct {
	Groups []GroupSearchResult `json:"groups"`
}

// ScopeTypeMask says where a role or permission may be assigned.
type ScopeTypeMask struct {
	Cluster   bool `json:"cluster"`
	Workspace bool `json:"workspace"`
}

// RolePermission is one permission of a role.
type RolePermission struct {
	Name          string        `json:"name"`
	ScopeTypeMask ScopeTypeMask `json:"scopeTypeMask"`
}

// Role is a built-in role and its permissions.
type Role struct {
	RoleID        int              `json:"roleId"`
	Name          string           `json:"name"`
	Permissions   []RolePermission `json:"permissions"`
	ScopeTypeMask ScopeTypeMask    `json:"scopeTypeMask"`
}

// RoleRef names a role by id (or by name).
type RoleRef struct {
	RoleID int    `json:"roleId"`
	Name   string `json:"name,omitempty"`
}

// RoleAssignmentSpec is a role and where it holds: ScopeWorkspaceID, or
// cluster-wide when none.
type RoleAssignmentSpec struct {
	Role             RoleRef `json:"role"`
	ScopeWorkspaceID *int64  `json:"scopeWorkspaceId,omitempty"`
	ScopeCluster     bool    `json:"scopeCluster,omitempty"`
}

// UserRoleAssignment gives a role to a user.
type UserRoleAssignment struct {
	UserID         int64              `json:"userId"`
	Username       string             `json:"username,omitempty"`
	RoleAssignment RoleAssignmentSpec `json:"roleAssignment"`
}

// GroupRoleAssignment gives a role to a group.
type GroupRoleAssignment struct {
	GroupID        int64              `json:"groupId"`
	GroupName      string             `json:"groupName,omitempty"`
	RoleAssignment RoleAssignmentSpec `json:"roleAssignment"`
}

// AssignRolesRequest is POST /api/v1/roles/add-assignments and
// /remove-assignments.
type AssignRolesRequest struct {
	GroupRoleAssignments []GroupRoleAssignment `json:"groupRoleAssignments"`
	UserRoleAssignments  []UserRoleAssignment  `json:"userRoleAssignments"`
}

// RoleWithAssignments is a role and who holds it where.
type RoleWithAssignments struct {
	Role                 Role                  `json:"role"`
	GroupRoleAssignments []GroupRoleAssignment `json:"groupRoleAssignments"`
	UserRoleAssignments  []UserRoleAssignment  `json:"userRoleAssignments"`
}

// RolesResponse lists roles (POST /api/v1/roles/search).
type RolesResponse struct {
	Roles []Role `json:"roles"`
}

// RolesWithAssignmentsResponse lists roles with their assignments (by ids,
// by user, by group).
type RolesWithAssignmentsResponse struct {
	Roles []RoleWithAssignments `json:"roles"`
}

// RolesByIDRequest is POST /api/v1/roles/search/by-ids.
type RolesByIDRequest struct {
	RoleIDs []int `json:"roleIds"`
}

// PermissionsSummary is GET /api/v1/permissions/summary: the caller's
// roles and where each holds.
type PermissionsSummary struct {
	Roles       []Role                  `json:"roles"`
	Assignments []RoleAssignmentSummary `json:"assignments"`
	// AuthzType is the master's security.authz.type: under basic the
	// roles are held but decide nothing.
	AuthzType string `json:"authzType"`
}

// RoleAssignmentSummary says where one role of the caller holds.
type RoleAssignmentSummary struct {
	RoleID            int     `json:"roleId"`
	ScopeWorkspaceIDs []int64 `json:"scopeWorkspaceIds"`
	IsGlobal          bool    `json:"isGlobal"`
}

// WorkspaceMembersResponse is GET /api/v1/roles/workspace/{workspaceId}:
// the role assignments in a workspace.
type WorkspaceMembersResponse struct {
	Assignments []RoleAssignment `json:"assignments"`
}
