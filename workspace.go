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
