package resolute

import "time"

// UserGroup is a named set of users, to whom roles are assigned together
// under RBAC (Determined's user groups).
type UserGroup struct {
	ID         int64     `json:"groupId"`
	Name       string    `json:"name"`
	NumMembers int       `json:"numMembers"`
	CreatedAt  time.Time `json:"createdAt"`
}

// RoleAssignment gives a built-in role to a user or a group, cluster-wide
// (no WorkspaceID) or in one workspace.
type RoleAssignment struct {
	ID            int64  `json:"id"`
	Role          string `json:"role"`
	UserID        *int64 `json:"userId,omitempty"`
	Username      string `json:"username,omitempty"`
	GroupID       *int64 `json:"groupId,omitempty"`
	GroupName     string `json:"groupName,omitempty"`
	WorkspaceID   *int64 `json:"workspaceId,omitempty"`
	WorkspaceName string `json:"workspaceName,omitempty"`
}

// Principal names whom an assignment is to: "user alice", "group ml".
func (a RoleAssignment) Principal() string {
	if a.GroupID != nil {
		return "group " + a.GroupName
	}
	return "user " + a.Username
}

// Scope names where an assignment holds: "cluster-wide" or `workspace "x"`.
func (a RoleAssignment) Scope() string {
	if a.WorkspaceID == nil {
		return "cluster-wide"
	}
	return "workspace " + quote(a.WorkspaceName)
}

func quote(s string) string { return "\"" + s + "\"" }
