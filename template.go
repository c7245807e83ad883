package resolute

import "time"

// Template is a named piece of configuration that experiment and task
// configs merge under themselves (seeds: "Configuration Templates").
type Template struct {
	Name       string `json:"name"`
	ConfigYAML string `json:"yaml"` // as written, comments and all
	// Config is the YAML as a JSON object, as Determined's API returns it.
	Config        map[string]any `json:"config,omitempty"`
	WorkspaceID   int64          `json:"workspaceId"`
	WorkspaceName string         `json:"workspaceName"`
	UserID        int64          `json:"userId"`
	Username      string         `json:"username"`
	CreatedAt     time.Time      `json:"createdAt"`
	UpdatedAt     time.Time      `json:"updatedAt"`
}
