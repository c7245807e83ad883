package resolute

import "time"

// Built-in accounts that exist on every new cluster (seeds: "Default Password").
const (
	AdminUsername      = "admin"
	DeterminedUsername = "determined"
)

// User is a person (or script) who can log in.
type User struct {
	ID          int64     `json:"id"`
	Username    string    `json:"username"`
	DisplayName string    `json:"displayName"`
	Admin       bool      `json:"admin"`
	Active      bool      `json:"active"`
	HasPassword bool      `json:"hasPassword"`
	CreatedAt   time.Time `json:"createdAt"`
	// AgentUserGroup is the Unix user and group the user's tasks run as,
	// when an administrator linked one; nil means the default,
	// task_uid_base + ID.
	AgentUserGroup *AgentUserGroup `json:"agentUserGroup,omitempty"`
}

// AgentUserGroup is the Unix user and group a user's tasks run as
// (Determined's linked agent user, `det user link-with-agent-user`): on the
// local resource manager the processes' uid and gid, on Kubernetes the
// pod's runAsUser and runAsGroup. The names set the tasks' USER and LOGNAME.
type AgentUserGroup struct {
	UID   int    `json:"agentUid"`
	GID   int    `json:"agentGid"`
	User  string `json:"agentUser"`
	Group string `json:"agentGroup"`
}

// DefaultTaskUIDBase is task_uid_base's default: unlinked users' tasks run
// as uid and gid DefaultTaskUIDBase + their user id, far above the ids of
// any real account.
const DefaultTaskUIDBase = 2_000_000_000

// MaxTaskUID is the largest uid or gid a task may run as: 2^32-2 (the
// kernel reserves 2^32-1, "no id").
const MaxTaskUID = 1<<32 - 2

// TaskUser is the Unix identity one allocation runs as.
type TaskUser struct {
	UID, GID    int
	User, Group string
	// Linked says it is the owner's AgentUserGroup; otherwise it is the
	// owner's default ids (task_uid_base + user id), which have no account
	// on the machine and no meaning in a container image.
	Linked bool
}

// Session is a logged-in user's session. The token itself is only ever seen by
// the client; the database keeps its hash.
type Session struct {
	ID        int64     `json:"id"`
	UserID    int64     `json:"userId"`
	ExpiresAt time.Time `json:"expiresAt"`
}
