package resolute

import "time"

// Names of the objects every new cluster starts with.
const (
	DefaultWorkspaceName = "Uncategorized"
	DefaultProjectName   = "Uncategorized"
)

// Workspace groups projects, and later models and tasks.
type Workspace struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Archived    bool      `json:"archived"`
	Immutable   bool      `json:"immutable"` // the default workspace cannot be renamed, archived or deleted
	UserID      int64     `json:"userId"`
	Username    string    `json:"username"`
	NumProjects int       `json:"numProjects"`
	CreatedAt   time.Time `json:"createdAt"`
	WorkspaceSettingsView
}

// Project groups experiments inside a workspace.
type Project struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	WorkspaceID    int64     `json:"workspaceId"`
	WorkspaceName  string    `json:"workspaceName"`
	Archived       bool      `json:"archived"`
	Immutable      bool      `json:"immutable"` // the default project cannot be renamed, archived or deleted
	UserID         int64     `json:"userId"`
	Username       string    `json:"username"`
	NumExperiments int       `json:"numExperiments"`
	CreatedAt      time.Time `json:"createdAt"`
}

// WorkspaceSettings are a workspace's settings (Determined's): where its
// work goes and how it runs when a config does not say. The zero value sets
// nothing: the master's defaults and the owners' links apply.
type WorkspaceSettings struct {
	// DefaultComputePool and DefaultAuxPool are where its experiments and
	// tasks with slots, and its zero-slot tasks, go when their configs name
	// no resources.resource_pool; "" = the master's defaults.
	DefaultComputePool string
	DefaultAuxPool     string
	// CheckpointStorage is the checkpoint_storage section its experiments
	// get when their configs (and templates) set none, in place of the
	// master's; nil = the master's. It holds secrets as given.
	CheckpointStorage map[string]any
	// AgentUserGroup is the Unix user and group its tasks run as, winning
	// over their owners' links; nil = each owner's.
	AgentUserGroup *AgentUserGroup
	// Namespace is the Kubernetes namespace of its tasks' pods; "" = the
	// pool's or the resource manager's.
	Namespace string
}

// View is the settings as they leave the master: the storage's secrets
// masked (MaskStorage).
func (s WorkspaceSettings) View() WorkspaceSettingsView {
	return WorkspaceSettingsView{DefaultComputePool: s.DefaultComputePool, DefaultAuxPool: s.DefaultAuxPool,
		CheckpointStorageConfig: MaskStorage(s.CheckpointStorage), AgentUserGroup: s.AgentUserGroup, Namespace: s.Namespace}
}

// WorkspaceSettingsView is a workspace's settings under Determined's JSON
// names, with the checkpoint storage's secrets masked.
type WorkspaceSettingsView struct {
	DefaultComputePool      string          `json:"defaultComputePool"`
	DefaultAuxPool          string          `json:"defaultAuxPool"`
	CheckpointStorageConfig map[string]any  `json:"checkpointStorageConfig,omitempty"`
	AgentUserGroup          *AgentUserGroup `json:"agentUserGroup,omitempty"`
	Namespace               string          `json:"namespace,omitempty"`
}

// PoolBinding binds a resource pool to a workspace: a pool with bindings is
// usable only by the workspaces it is bound to.
type PoolBinding struct {
	PoolName      string `json:"poolName"`
	WorkspaceID   int64  `json:"workspaceId"`
	WorkspaceName string `json:"workspaceName"`
}
