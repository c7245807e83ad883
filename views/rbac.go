package views

import "github.com/resolute-ml/resolute"

// WorkspaceMembers is a workspace's Members tab: who holds which role in
// it, and, for those who may assign roles there, forms to grant and revoke.
type WorkspaceMembers struct {
	Shell     Shell
	Workspace resolute.Workspace
	Members   []resolute.RoleAssignment
	// Roles are the roles that can be assigned in a workspace.
	Roles []string
	// CanManage says whether the viewer may grant and revoke here.
	CanManage bool
	// RBAC says whether roles decide (security.authz.type: rbac).
	RBAC bool
	Form MemberForm
}

// MemberForm is the grant form with what was typed.
type MemberForm struct {
	Kind, Name, Role string // kind: user or group
	Errors           FormErrors
}

// GroupList is the administrators' list of user groups.
type GroupList struct {
	Shell  Shell
	Groups []resolute.UserGroup
	Form   MemberForm // Name: the new group's
}

// GroupPage is one group: its members and its cluster-wide roles.
type GroupPage struct {
	Shell   Shell
	Group   resolute.UserGroup
	Members []resolute.User
	// Roles are the group's role assignments, anywhere.
	Roles []resolute.RoleAssignment
	// AllRoles are every role, for the cluster-wide grant form.
	AllRoles []string
	Errors   FormErrors
}
