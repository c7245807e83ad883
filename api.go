package resolute

import (
	"encoding/json"
	"time"
)

// The JSON bodies of /api/v1, shared by handlers and client. Names follow
// Determined's REST API (camelCase), so its clients and scripts keep working.

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
	// IsHashed is sent by Determined's clients; Resolute never accepts
	// pre-hashed passwords and rejects the request when it is true.
	IsHashed bool `json:"isHashed"`
}

// LoginResponse answers a login with a bearer token.
type LoginResponse struct {
	Token string `json:"token"`
	User  User   `json:"user"`
}

// UserResponse wraps one user.
type UserResponse struct {
	User User `json:"user"`
}

// UsersResponse lists users.
type UsersResponse struct {
	Users []User `json:"users"`
}

// CreateUserRequest is the body of POST /api/v1/users.
type CreateUserRequest struct {
	User     UserSpec `json:"user"`
	Password string   `json:"password"`
}

// UserSpec is what can be set of a user.
type UserSpec struct {
	Username    string `json:"username"`
	DisplayName string `json:"displayName"`
	Admin       bool   `json:"admin"`
	Active      *bool  `json:"active,omitempty"`
}

// PatchUserRequest is the body of PATCH /api/v1/users/{id}; absent fields
// stay as they are.
type PatchUserRequest struct {
	DisplayName *string `json:"displayName,omitempty"`
	Admin       *bool   `json:"admin,omitempty"`
	Active      *bool   `json:"active,omitempty"`
	// AgentUserGroup links the user to the Unix user and group their tasks
	// run as (administrators only); an empty one ({}) removes the link.
	AgentUserGroup *AgentUserGroup `json:"agentUserGroup,omitempty"`
}

// SetPasswordRequest is the body of POST /api/v1/users/{id}/password.
// OldPassword is required when users change their own password.
type SetPasswordRequest struct {
	Password    string `json:"password"`
	OldPassword string `json:"oldPassword,omitempty"`
}

// WorkspaceResponse wraps one workspace.
type WorkspaceResponse struct {
	Workspace Workspace `json:"workspace"`
}

// WorkspacesResponse lists workspaces.
type WorkspacesResponse struct {
	Workspaces []Workspace `json:"workspaces"`
}

// NameRequest creates or renames a workspace.
type NameRequest struct {
	Name string `json:"name"`
}

// ProjectRequest creates or edits a project; on PATCH absent fields stay.
type ProjectRequest struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
}

// ProjectResponse wraps one project.
type ProjectResponse struct {
	Project Project `json:"project"`
}

// ProjectsResponse lists projects.
type ProjectsResponse struct {
	Projects []Project `json:"projects"`
}

// MasterInfo is GET /api/v1/master and /info.
type MasterInfo struct {
	Version         string `json:"version"`
	ClusterID       string `json:"clusterId"`
	ClusterName     string `json:"clusterName"`
	ResourceManager string `json:"resourceManager"`
	URL             string `json:"url"`
}

// LogEntry is one master log line; GET /api/v1/master/logs streams them as
// newline-delimited {"result": LogEntry}.
type LogEntry struct {
	ID        int64     `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Level     string    `json:"level"`
	Message   string    `json:"message"`
}

// ErrorResponse is the body of every API error.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is an error's code and message.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// TemplateRequest creates or replaces a template: the YAML as text (kept with
// its comments), or, as Determined's clients send it, Config as an object.
type TemplateRequest struct {
	Name        string         `json:"name"`
	YAML        string         `json:"yaml,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	WorkspaceID int64          `json:"workspaceId,omitempty"`
}

// TemplateResponse wraps one template.
type TemplateResponse struct {
	Template Template `json:"template"`
}

// TemplatesResponse lists templates.
type TemplatesResponse struct {
	Templates []Template `json:"templates"`
}

// ExperimentConfigRequest is what POST /api/v1/experiments and
// /api/v1/preview-hp-search read of a config: the YAML text, an optional
// template and `--config key=value` overrides.
type ExperimentConfigRequest struct {
	Config       string   `json:"config"`
	Template     string   `json:"template,omitempty"`
	Overrides    []string `json:"overrides,omitempty"`
	ValidateOnly bool     `json:"validateOnly,omitempty"`
	ProjectID    int64    `json:"projectId,omitempty"`
}

// ValidateResponse answers a valid config: the fully expanded config and
// the deprecation warnings.
type ValidateResponse struct {
	Config   map[string]any `json:"config"`
	Warnings []string       `json:"warnings"`
}

// PreviewResponse is the searcher's plan for a config.
type PreviewResponse struct {
	Plan     any      `json:"plan"`
	Summary  string   `json:"summary"` // the plan as a person reads it
	Warnings []string `json:"warnings"`
}

// CreateExperimentRequest is the JSON form of POST /api/v1/experiments. The
// CLI sends the same fields as multipart/form-data instead, with the context
// as a file part, so large uploads need no base64.
type CreateExperimentRequest struct {
	ExperimentConfigRequest
	ContextTgz []byte `json:"contextTgz,omitempty"` // base64 in JSON
	Activate   *bool  `json:"activate,omitempty"`   // false creates it paused
	ParentID   int64  `json:"parentId,omitempty"`
}

// ExperimentResponse wraps one experiment.
type ExperimentResponse struct {
	Experiment Experiment `json:"experiment"`
	Warnings   []string   `json:"warnings,omitempty"`
}

// ExperimentsResponse lists experiments.
type ExperimentsResponse struct {
	Experiments []Experiment `json:"experiments"`
}

// TrialsResponse lists trials.
type TrialsResponse struct {
	Trials []Trial `json:"trials"`
}

// TrialResponse wraps one trial with its latest metrics of each group.
type TrialResponse struct {
	Trial         Trial           `json:"trial"`
	LatestMetrics []MetricsReport `json:"latestMetrics"`
}

// RunMetadataRequest is the body of POST /api/v1/runs/{id}/metadata: the
// JSON object that replaces the run's (trial's) metadata. RunID repeats the
// path's id, as Determined's clients send it; the path wins.
type RunMetadataRequest struct {
	RunID    int64           `json:"runId,omitempty"`
	Metadata json.RawMessage `json:"metadata"`
}

// RunMetadataResponse is a run's metadata, {} when none was set.
type RunMetadataResponse struct {
	Metadata json.RawMessage `json:"metadata"`
}

// CheckpointsResponse lists checkpoints.
type CheckpointsResponse struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// MetricsResponse lists a trial's reports of one group.
type MetricsResponse struct {
	Metrics []MetricsReport `json:"metrics"`
}

// ExperimentMetricsResponse is one metric of every trial of an experiment
// (GET /api/v1/experiments/{id}/metrics), in trial order.
type ExperimentMetricsResponse struct {
	Trials []TrialSeries `json:"trials"`
}

// TrialSeries is one metric of one trial in step order.
type TrialSeries struct {
	TrialID int64         `json:"trialId"`
	Points  []MetricPoint `json:"points"`
}

// MetricPoint is a metric's value after a number of batches.
type MetricPoint struct {
	StepsCompleted int64   `json:"stepsCompleted"`
	Value          float64 `json:"value"`
	// ReportedAt is when the trial reported it (absent where not read).
	ReportedAt time.Time `json:"reportTime,omitzero"`
	// Epoch is the report's "epochs" (or "epoch") metric, if it has one.
	Epoch *float64 `json:"epoch,omitempty"`
}

// PatchExperimentRequest edits an experiment; absent fields stay.
type PatchExperimentRequest struct {
	Name        *string         `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Labels      *[]string       `json:"labels,omitempty"`
	Notes       *string         `json:"notes,omitempty"`
	Resources   *PatchResources `json:"resources,omitempty"`
}

// PatchResources are the scheduling fields a PATCH of an experiment edits.
type PatchResources struct {
	MaxSlots *int     `json:"max_slots,omitempty"`
	Weight   *float64 `json:"weight,omitempty"`
	Priority *int     `json:"priority,omitempty"`
}

// MoveRequest moves an experiment to another project.
type MoveRequest struct {
	DestinationProjectID int64 `json:"destinationProjectId"`
}

// Job is one entry of the job queue (GET /api/v1/job-queues), named as
// Determined's.
type Job struct {
	JobID          string    `json:"jobId"`
	Type           string    `json:"type"` // EXPERIMENT (NOTEBOOK, COMMAND... with tasks)
	EntityID       string    `json:"entityId"`
	Name           string    `json:"name"`
	UserID         int64     `json:"userId"`
	Username       string    `json:"username"`
	WorkspaceID    int64     `json:"workspaceId"`
	State          string    `json:"state"` // QUEUED, SCHEDULED (running), SCHEDULED_BACKFILLED
	Priority       int       `json:"priority"`
	Weight         float64   `json:"weight"`
	ResourcePool   string    `json:"resourcePool"`
	IsPreemptible  bool      `json:"isPreemptible"`
	RequestedSlots int       `json:"requestedSlots"`
	AllocatedSlots int       `json:"allocatedSlots"`
	QueuePosition  float64   `json:"queuePosition"`
	JobsAhead      int       `json:"jobsAhead"`
	Reason         string    `json:"reason,omitempty"` // why it waits
	SubmissionTime time.Time `json:"submissionTime"`
}

// JobQueueResponse lists the jobs of a pool (or all), in queue order.
type JobQueueResponse struct {
	Jobs []Job `json:"jobs"`
}

// QueueControl is one change to the queue (POST /api/v1/job-queues): a new
// priority, weight or pool, or a move ahead of or behind another job.
type QueueControl struct {
	JobID        string   `json:"jobId"`
	Priority     *int     `json:"priority,omitempty"`
	Weight       *float64 `json:"weight,omitempty"`
	ResourcePool *string  `json:"resourcePool,omitempty"`
	AheadOf      string   `json:"aheadOf,omitempty"`
	BehindOf     string   `json:"behindOf,omitempty"`
}

// UpdateJobQueueRequest is the body of POST /api/v1/job-queues.
type UpdateJobQueueRequest struct {
	Updates []QueueControl `json:"updates"`
}

// ResourcePool is a pool and what holds its slots (GET /api/v1/resource-pools).
type ResourcePool struct {
	Name            string `json:"name"`
	Description     string `json:"description"`
	SchedulerType   string `json:"schedulerType"`
	Preemption      bool   `json:"preemption"`
	FittingPolicy   string `json:"fittingPolicy"`
	DefaultPriority int    `json:"defaultPriority"`
	SlotType        string `json:"slotType"` // cpu or cuda
	Slots           []Slot `json:"slots"`
	SlotsUsed       int    `json:"slotsUsed"`
	DefaultCompute  bool   `json:"defaultComputePool"`
	DefaultAux      bool   `json:"defaultAuxPool"`
}

// Slot is one slot and the allocation holding it.
type Slot struct {
	ID           int    `json:"id"`
	Device       string `json:"device"`
	AllocationID string `json:"allocationId,omitempty"`
	// Agent is the machine (Kubernetes node) of the slot; "" on the local
	// resource manager's one machine.
	Agent string `json:"agent,omitempty"`
	// Foreign says a pod Resolute did not start holds the slot.
	Foreign bool `json:"foreign,omitempty"`
	// Hidden says an allocation of a workspace the requester does not read
	// holds the slot (RBAC): which one is not told.
	Hidden bool `json:"hidden,omitempty"`
	// Usage is a GPU slot's latest utilization and memory, where the
	// resource manager reads them (the local one, through NVML); nil else.
	Usage *GPUUsage `json:"usage,omitempty"`
	// Enabled is false once an administrator disabled the slot (det slot
	// disable): nothing new is placed on it. Draining says the allocation
	// holding it is left to finish.
	Enabled  bool `json:"enabled"`
	Draining bool `json:"draining"`
}

// AgentsResponse lists the agents.
type AgentsResponse struct {
	Agents []Agent `json:"agents"`
}

// Agent is one machine of the cluster (a Kubernetes node) with its slots.
type Agent struct {
	ID           string `json:"id"`
	ResourcePool string `json:"resourcePool"` // "" when no pool's pods may run there
	Slots        []Slot `json:"slots"`
	// Enabled is false once an administrator disabled the agent (det agent
	// disable): nothing new is placed there. Draining says what runs there
	// is left to finish.
	Enabled  bool `json:"enabled"`
	Draining bool `json:"draining"`
}

// ResourcePoolsResponse lists the pools.
type ResourcePoolsResponse struct {
	ResourcePools []ResourcePool `json:"resourcePools"`
}

// ModelRequest creates or (PATCH) edits a model; absent fields stay.
type ModelRequest struct {
	Name        *string          `json:"name,omitempty"`
	Description *string          `json:"description,omitempty"`
	Metadata    *json.RawMessage `json:"metadata,omitempty"`
	Labels      *[]string        `json:"labels,omitempty"`
	Notes       *string          `json:"notes,omitempty"`
	WorkspaceID int64            `json:"workspaceId,omitempty"`
}

// ModelResponse wraps one model.
type ModelResponse struct {
	Model Model `json:"model"`
}

// ModelsResponse lists models.
type ModelsResponse struct {
	Models []Model `json:"models"`
}

// ModelVersionRequest registers a checkpoint (POST) or edits a version
// (PATCH; absent fields stay).
type ModelVersionRequest struct {
	CheckpointUUID string           `json:"checkpointUuid,omitempty"`
	Name           *string          `json:"name,omitempty"`
	Comment        *string          `json:"comment,omitempty"`
	Notes          *string          `json:"notes,omitempty"`
	Metadata       *json.RawMessage `json:"metadata,omitempty"`
	Labels         *[]string        `json:"labels,omitempty"`
}

// ModelVersionResponse wraps one version.
type ModelVersionResponse struct {
	ModelVersion ModelVersion `json:"modelVersion"`
}

// ModelVersionsResponse lists a model's versions, newest first.
type ModelVersionsResponse struct {
	Model         Model          `json:"model"`
	ModelVersions []ModelVersion `json:"modelVersions"`
}

// AliasRequest points an alias at a version.
type AliasRequest struct {
	Version int `json:"version"`
}

// MoveModelRequest moves a model to another workspace.
type MoveModelRequest struct {
	DestinationWorkspaceID int64 `json:"destinationWorkspaceId"`
}

// CreateTaskRequest launches a command, notebook, shell or TensorBoard
// (POST /api/v1/commands, /notebooks, /shells, /tensorboards).
type CreateTaskRequest struct {
	Config       string   `json:"config,omitempty"` // YAML
	TemplateName string   `json:"templateName,omitempty"`
	Overrides    []string `json:"overrides,omitempty"`
	ContextTgz   []byte   `json:"contextTgz,omitempty"`
	ProjectID    int64    `json:"projectId,omitempty"`
	Entrypoint   []string `json:"entrypoint,omitempty"` // commands
	// ExperimentIDs and TrialIDs choose what a TensorBoard shows (at least
	// one between them); only TensorBoards take them.
	ExperimentIDs []int64 `json:"experimentIds,omitempty"`
	TrialIDs      []int64 `json:"trialIds,omitempty"`
}

// TaskResponse wraps one task.
type TaskResponse struct {
	Task Task `json:"task"`
}

// OpenTaskRequest asks for a link that opens a task's service in a browser
// (POST /api/v1/tasks/{id}/open); Path, optional, is where under the
// task's /proxy/<id>/ to land; Port, optional, opens one of the task's
// HTTP proxy ports (environment.proxy_ports with proxy_tcp: false) at
// /proxy/<id>:<port>/ instead.
type OpenTaskRequest struct {
	Path string `json:"path,omitempty"`
	Port int    `json:"port,omitempty"`
}

// OpenTaskResponse is a link on the task origin that opens a task's service
// in a browser: it holds a ticket that works once, until ExpiresAt.
type OpenTaskResponse struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// TasksResponse lists tasks.
type TasksResponse struct {
	Tasks []Task `json:"tasks"`
}

// RendezvousRequest is a pod of a multi-pod allocation saying where it runs
// (POST /api/v1/allocations/{id}/rendezvous).
type RendezvousRequest struct {
	Rank  int    `json:"rank"`  // the pod's index, 0 for the chief
	Size  int    `json:"size"`  // how many pods the allocation has
	Addr  string `json:"addr"`  // the pod's IP
	Slots int    `json:"slots"` // the pod's slots
}

// RendezvousResponse says where every pod of the allocation runs, by rank,
// once all have posted (Ready); before that, after the request's timeout,
// Ready is false and the pod posts again.
type RendezvousResponse struct {
	Ready               bool     `json:"ready"`
	ContainerAddrs      []string `json:"container_addrs"`
	ContainerSlotCounts []int    `json:"container_slot_counts"`
}
