package db

// Viewer limits a list to what one user sees under RBAC: the objects of the
// workspaces where they hold one of Roles (authz.Visible decides which; the
// lists' SQL filters on role_holders). The zero Viewer sees everything.
type Viewer struct {
	Filtered bool
	UserID   int64
	Roles    []string
}

// params are the viewer_id and viewer_roles of a list's query: a NULL id
// filters nothing.
func (v Viewer) params() (*int64, []string) {
	if !v.Filtered {
		return nil, []string{}
	}
	id := v.UserID
	roles := v.Roles
	if roles == nil {
		roles = []string{}
	}
	return &id, roles
}
