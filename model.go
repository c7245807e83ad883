package resolute

import (
	"encoding/json"
	"time"
)

// Model is an entry of the model registry: a named group of checkpoints,
// its versions.
type Model struct {
	ID            int64           `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Metadata      json.RawMessage `json:"metadata"`
	Labels        []string        `json:"labels"`
	Notes         string          `json:"notes"`
	WorkspaceID   int64           `json:"workspaceId"`
	WorkspaceName string          `json:"workspaceName"`
	UserID        int64           `json:"userId"`
	Username      string          `json:"username"`
	Archived      bool            `json:"archived"`
	NumVersions   int             `json:"numVersions"`
	CreatedAt     time.Time       `json:"creationTime"`
	UpdatedAt     time.Time       `json:"lastUpdatedTime"`
}

// ModelVersion is one checkpoint registered under a model, numbered 1, 2, 3…
type ModelVersion struct {
	ID             int64           `json:"id"`
	ModelID        int64           `json:"modelId"`
	ModelName      string          `json:"modelName"`
	Version        int             `json:"version"`
	CheckpointUUID string          `json:"checkpointUuid"`
	Name           string          `json:"name"`
	Comment        string          `json:"comment"`
	Notes          string          `json:"notes"`
	Metadata       json.RawMessage `json:"metadata"`
	Labels         []string        `json:"labels"`
	Aliases        []string        `json:"aliases"`
	UserID         int64           `json:"userId"`
	Username       string          `json:"username"`
	ExperimentID   int64           `json:"experimentId"`
	TrialID        int64           `json:"trialId"`
	StepsCompleted int64           `json:"stepsCompleted"`
	CheckpointSize int64           `json:"checkpointSize"`
	CreatedAt      time.Time       `json:"creationTime"`
	UpdatedAt      time.Time       `json:"lastUpdatedTime"`
	// Validation is the validation metrics of the checkpoint's trial at its
	// step, when any.
	Validation json.RawMessage `json:"validationMetrics,omitempty"`
}
