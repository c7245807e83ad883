package resolute

import (
	"encoding/json"
	"strconv"
	"time"
)

// Experiment and trial states, as Determined names them.
const (
	StateActive            = "ACTIVE"
	StatePaused            = "PAUSED"
	StateStoppingCanceled  = "STOPPING_CANCELED"
	StateStoppingKilled    = "STOPPING_KILLED"
	StateStoppingCompleted = "STOPPING_COMPLETED"
	StateStoppingError     = "STOPPING_ERROR"
	StateCompleted         = "COMPLETED"
	StateCanceled          = "CANCELED"
	StateError             = "ERROR"
)

// Terminal reports whether a state is final.
func Terminal(state string) bool {
	return state == StateCompleted || state == StateCanceled || state == StateError
}

// Allocation states.
const (
	AllocationPending    = "PENDING"
	AllocationRunning    = "RUNNING"
	AllocationTerminated = "TERMINATED"
)

// Experiment is one submitted search: a config, a context directory and the
// trials its searcher creates.
type Experiment struct {
	ID             int64           `json:"id"`
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Labels         []string        `json:"labels"`
	Notes          string          `json:"notes"`
	State          string          `json:"state"`
	Archived       bool            `json:"archived"`
	ProjectID      int64           `json:"projectId"`
	ProjectName    string          `json:"projectName"`
	WorkspaceID    int64           `json:"workspaceId"`
	WorkspaceName  string          `json:"workspaceName"`
	UserID         int64           `json:"userId"`
	Username       string          `json:"username"`
	Config         json.RawMessage `json:"config"` // the expanded config
	Template       string          `json:"template,omitempty"`
	ParentID       *int64          `json:"parentId,omitempty"`
	Seed           int64           `json:"seed"`
	Restarts       int             `json:"restarts"`
	Progress       float64         `json:"progress"`
	BestValidation *float64        `json:"bestValidation,omitempty"`
	Priority       *int            `json:"priority,omitempty"`
	Weight         float64         `json:"weight"`
	MaxSlots       *int            `json:"maxSlots,omitempty"`
	ResourcePool   string          `json:"resourcePool"`
	QueuePosition  float64         `json:"queuePosition"`
	NumTrials      int             `json:"numTrials"`
	SearcherDone   bool            `json:"searcherDone"`
	CreatedAt      time.Time       `json:"startTime"`
	EndedAt        *time.Time      `json:"endTime,omitempty"`
}

// Trial is one set of hyperparameters being trained.
type Trial struct {
	ID               int64           `json:"id"`
	ExperimentID     int64           `json:"experimentId"`
	RequestID        int             `json:"requestId"`
	State            string          `json:"state"`
	Hparams          json.RawMessage `json:"hparams"`
	Seed             int64           `json:"seed"`
	RunID            int             `json:"runId"`
	Restarts         int             `json:"restarts"`
	StepsCompleted   int64           `json:"totalBatchesProcessed"`
	BestValidation   *float64        `json:"bestValidation,omitempty"`
	LatestCheckpoint string          `json:"latestCheckpoint,omitempty"`
	Progress         float64         `json:"progress"`
	EarlyExit        string          `json:"earlyExit,omitempty"`
	RunnerState      string          `json:"runnerState,omitempty"`
	// LogPolicyMatched names the log policy a line of the trial's logs last
	// matched; RetriesCancelled and ExcludedAgents are what such policies
	// did (cancel_retries, exclude_node).
	LogPolicyMatched string     `json:"logPolicyMatched,omitempty"`
	RetriesCancelled bool       `json:"retriesCancelled,omitempty"`
	ExcludedAgents   []string   `json:"excludedAgents,omitempty"`
	CreatedAt        time.Time  `json:"startTime"`
	EndedAt          *time.Time `json:"endTime,omitempty"`
}

// TaskID is the task of a trial's allocations.
func (t Trial) TaskID() string { return TrialTaskID(t.ID) }

// TrialTaskID names the task of trial id's allocations.
func TrialTaskID(id int64) string { return "trial-" + itoa(id) }

// Allocation is one run of a task on the resource manager.
type Allocation struct {
	ID      string `json:"id"`
	TaskID  string `json:"taskId"`
	TrialID *int64 `json:"trialId,omitempty"`
	State   string `json:"state"`
	Slots   int    `json:"slots"`
	SlotIDs []int  `json:"slotIds"`
	// SlotAgents is the agent of each slot in SlotIDs (a Kubernetes node);
	// empty on the local resource manager, whose one agent is "local".
	SlotAgents   []string   `json:"slotAgents,omitempty"`
	Preempt      bool       `json:"preempt"`
	PreemptAcked bool       `json:"preemptAcked"`
	KillAfter    *time.Time `json:"killAfter,omitempty"`
	ExitCode     *int       `json:"exitCode,omitempty"`
	ExitReason   string     `json:"exitReason,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	StartedAt    *time.Time `json:"startedAt,omitempty"`
	EndedAt      *time.Time `json:"endedAt,omitempty"`
}

// Checkpoint is a saved state of a trial in checkpoint storage.
type Checkpoint struct {
	UUID           string           `json:"uuid"`
	TrialID        int64            `json:"trialId"`
	ExperimentID   int64            `json:"experimentId"`
	AllocationID   string           `json:"allocationId"`
	TaskID         string           `json:"taskId"`
	StepsCompleted int64            `json:"stepsCompleted"`
	State          string           `json:"state"`
	Resources      map[string]int64 `json:"resources"`
	Size           int64            `json:"size"`
	Metadata       json.RawMessage  `json:"metadata"`
	ReportTime     time.Time        `json:"reportTime"`
	// Validation is the trial's validation metrics at the same step, if any.
	Validation json.RawMessage `json:"validationMetrics,omitempty"`
}

// MetricsReport is one report of a metric group by a trial.
type MetricsReport struct {
	TrialID        int64           `json:"trialId"`
	TrialRunID     int             `json:"trialRunId"`
	StepsCompleted int64           `json:"stepsCompleted"`
	Group          string          `json:"group"`
	Metrics        json.RawMessage `json:"metrics"`
	ReportedAt     time.Time       `json:"reportTime"`
}

// TaskLog is one line of a task's output.
type TaskLog struct {
	ID           int64     `json:"id"`
	TaskID       string    `json:"taskId"`
	AllocationID string    `json:"allocationId"`
	Time         time.Time `json:"timestamp"`
	Level        string    `json:"level"`
	StdType      string    `json:"stdtype"`
	Rank         *int      `json:"rankId,omitempty"`
	Source       string    `json:"source"`
	Log          string    `json:"log"`
	// AgentID and ContainerID say where the line was printed, as the
	// resource manager names it: the agent (machine, Kubernetes node) and
	// the container (the local allocation's process group, named by its
	// allocation id; a Kubernetes pod). "" for the master's own lines.
	AgentID     string `json:"agentId,omitempty"`
	ContainerID string `json:"containerId,omitempty"`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
