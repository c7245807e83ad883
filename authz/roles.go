package authz

import (
	"slices"
	"sort"
)

// Role is one of the built-in roles of RBAC (security.authz.type: rbac),
// named and numbered as Determined names and numbers them.
type Role string

// The built-in roles, from the least to the most.
const (
	// ModelRegistryViewer sees the model registry of its scope.
	ModelRegistryViewer Role = "ModelRegistryViewer"
	// Viewer sees the workspace, its projects, experiments (metadata and
	// artifacts), tasks (NTSC), templates and models.
	Viewer Role = "Viewer"
	// EditorRestricted is a Viewer who also creates, changes and deletes
	// projects, experiments, models and templates, and opens the
	// notebooks and shells of its scope; it launches no notebooks, shells,
	// commands or TensorBoards and changes none.
	EditorRestricted Role = "EditorRestricted"
	// Editor is an EditorRestricted who also launches and changes
	// notebooks, shells, commands and TensorBoards.
	Editor Role = "Editor"
	// WorkspaceAdmin is an Editor who also changes, archives and deletes
	// the workspace and assigns roles in it.
	WorkspaceAdmin Role = "WorkspaceAdmin"
	// WorkspaceCreator creates workspaces (cluster-wide only); its creator
	// becomes the new workspace's WorkspaceAdmin.
	WorkspaceCreator Role = "WorkspaceCreator"
	// ClusterAdmin may do everything (cluster-wide only).
	ClusterAdmin Role = "ClusterAdmin"
)

// Permission is one kind of access a role grants, named as Determined
// names it where it has one.
type Permission string

// The permissions.
const (
	ViewModelRegistry   Permission = "PERMISSION_TYPE_VIEW_MODEL_REGISTRY"
	ViewWorkspace       Permission = "PERMISSION_TYPE_VIEW_WORKSPACE"
	ViewProject         Permission = "PERMISSION_TYPE_VIEW_PROJECT"
	ViewExperiment      Permission = "PERMISSION_TYPE_VIEW_EXPERIMENT_ARTIFACTS"
	ViewNSC             Permission = "PERMISSION_TYPE_VIEW_NSC"
	ViewTemplates       Permission = "PERMISSION_TYPE_VIEW_TEMPLATES"
	CreateProjects      Permission = "PERMISSION_TYPE_CREATE_PROJECT"
	UpdateProjects      Permission = "PERMISSION_TYPE_UPDATE_PROJECT"
	CreateExperiments   Permission = "PERMISSION_TYPE_CREATE_EXPERIMENT"
	UpdateExperiments   Permission = "PERMISSION_TYPE_UPDATE_EXPERIMENT"
	UseNSC              Permission = "PERMISSION_TYPE_USE_NSC" // open notebooks and shells (Resolute's)
	CreateNSC           Permission = "PERMISSION_TYPE_CREATE_NSC"
	UpdateNSC           Permission = "PERMISSION_TYPE_UPDATE_NSC"
	CreateModels        Permission = "PERMISSION_TYPE_CREATE_MODEL_REGISTRY"
	EditModels          Permission = "PERMISSION_TYPE_EDIT_MODEL_REGISTRY"
	CreateTemplates     Permission = "PERMISSION_TYPE_CREATE_TEMPLATES"
	UpdateTemplates     Permission = "PERMISSION_TYPE_UPDATE_TEMPLATES"
	UpdateWorkspace     Permission = "PERMISSION_TYPE_UPDATE_WORKSPACE"
	AssignRolesIn       Permission = "PERMISSION_TYPE_ASSIGN_ROLES"
	CreateWorkspaces    Permission = "PERMISSION_TYPE_CREATE_WORKSPACE"
	AdministrateUsers   Permission = "PERMISSION_TYPE_ADMINISTRATE_USER"
	AdministrateGroups  Permission = "PERMISSION_TYPE_UPDATE_GROUP"
	ViewMasterLogs      Permission = "PERMISSION_TYPE_VIEW_MASTER_LOGS"
	EditJobQueue        Permission = "PERMISSION_TYPE_CONTROL_STRICT_JOB_QUEUE"
	ViewEveryWorkspaces Permission = "PERMISSION_TYPE_VIEW_ALL_WORKSPACES" // ClusterAdmin's
	ViewClusterUsage    Permission = "PERMISSION_TYPE_VIEW_CLUSTER_USAGE"
)

// RoleInfo is a role as `det rbac list-roles` shows it.
type RoleInfo struct {
	ID   int  `json:"roleId"`
	Name Role `json:"name"`
	// GlobalOnly roles are assigned cluster-wide, never in a workspace.
	GlobalOnly  bool         `json:"globalOnly"`
	Permissions []Permission `json:"permissions"`
}

var (
	viewerPerms = []Permission{ViewModelRegistry, ViewWorkspace, ViewProject, ViewExperiment, ViewNSC, ViewTemplates}
	restricted  = append(slices.Clone(viewerPerms), CreateProjects, UpdateProjects, CreateExperiments, UpdateExperiments,
		UseNSC, CreateModels, EditModels, CreateTemplates, UpdateTemplates)
	editorPerms = append(slices.Clone(restricted), CreateNSC, UpdateNSC)
	wsAdmin     = append(slices.Clone(editorPerms), UpdateWorkspace, AssignRolesIn)
	everything  = append(slices.Clone(wsAdmin), CreateWorkspaces, AdministrateUsers, AdministrateGroups, ViewMasterLogs,
		EditJobQueue, ViewEveryWorkspaces, ViewClusterUsage)
)

// roles are the built-in roles with Determined's ids.
var roles = []RoleInfo{
	{ID: 1, Name: ClusterAdmin, GlobalOnly: true, Permissions: everything},
	{ID: 2, Name: WorkspaceAdmin, Permissions: wsAdmin},
	{ID: 3, Name: WorkspaceCreator, GlobalOnly: true, Permissions: []Permission{CreateWorkspaces}},
	{ID: 4, Name: Viewer, Permissions: viewerPerms},
	{ID: 5, Name: Editor, Permissions: editorPerms},
	{ID: 6, Name: ModelRegistryViewer, Permissions: []Permission{ViewModelRegistry}},
	{ID: 7, Name: EditorRestricted, Permissions: restricted},
}

// Roles lists the built-in roles by id.
func Roles() []RoleInfo {
	out := slices.Clone(roles)
	for i := range out {
		out[i].Permissions = slices.Clone(out[i].Permissions)
	}
	return out
}

// RoleByName finds a built-in role, by its name or its id in decimal.
func RoleByName(name string) (RoleInfo, bool) {
	for _, r := range roles {
		if string(r.Name) == name || itoa(int64(r.ID)) == name {
			return r, true
		}
	}
	return RoleInfo{}, false
}

// grants says whether role r grants p.
func (r Role) grants(p Permission) bool {
	for _, info := range roles {
		if info.Name == r {
			return slices.Contains(info.Permissions, p)
		}
	}
	return false
}

// RolesGranting are the roles that grant p, sorted: what a list's SQL
// filter asks of role_holders.
func RolesGranting(p Permission) []string {
	var out []string
	for _, r := range roles {
		if slices.Contains(r.Permissions, p) {
			out = append(out, string(r.Name))
		}
	}
	sort.Strings(out)
	return out
}

// Permissions are a user's roles under RBAC: those held cluster-wide, and
// those held per workspace, their own and their groups' together.
type Permissions struct {
	Global     []Role
	Workspaces map[int64][]Role
}

// has says whether the roles held cluster-wide or in workspace ws grant p.
func (p *Permissions) has(perm Permission, ws int64) bool {
	for _, r := range p.Global {
		if r.grants(perm) {
			return true
		}
	}
	if ws == 0 {
		return false
	}
	for _, r := range p.Workspaces[ws] {
		if r.grants(perm) {
			return true
		}
	}
	return false
}

// Summary lists each permission the roles grant, cluster-wide (workspace
// 0) and per workspace: `det rbac my-permissions`.
func (p *Permissions) Summary() map[int64][]Permission {
	out := map[int64][]Permission{}
	add := func(ws int64, rs []Role) {
		for _, r := range rs {
			if info, ok := RoleByName(string(r)); ok {
				for _, perm := range info.Permissions {
					if !slices.Contains(out[ws], perm) {
						out[ws] = append(out[ws], perm)
					}
				}
			}
		}
		slices.Sort(out[ws])
	}
	add(0, p.Global)
	for ws, rs := range p.Workspaces {
		add(ws, rs)
	}
	return out
}
