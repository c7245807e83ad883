package control

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// The services: one per domain, each change a method that takes the Actor,
// asks authz.Can and checks the domain rule inside the transaction that
// writes. Handlers call them and nothing else to change state.

// Services are the services the handlers call, built once by the server.
type Services struct {
	Experiments *Experiments
	Tasks       *Tasks
	Queue       *Queue
	Workspaces  *Workspaces
	// WorkspaceSettings changes workspaces' settings and pool bindings.
	WorkspaceSettings *WorkspaceSettings
	Projects          *Projects
	Trials            *Trials
	Checkpoints       *Checkpoints
	Allocations       *Allocations
	Models            *Models
	Templates         *Templates
	Users             *Users
	RunMetadata       *RunMetadata
	TaskOrigin        *TaskOrigin
	Groups            *Groups
	Roles             *Roles
	Cluster           *Cluster

	// Webhooks and log retention (webhooks.go, retention.go).
	Webhooks     *Webhooks
	LogRetention *LogRetention
}

// ServicesOption tunes the services: WithMinPasswordLength.
type ServicesOption func(*Services)

// WithRBAC makes roles decide permissions (security.authz.type: rbac)
// instead of ownership.
func WithRBAC() ServicesOption {
	return func(s *Services) {
		s.Roles.rbac = true
		s.Workspaces.rbac = true
	}
}

// WithMinPasswordLength sets the fewest characters of a new password
// (DefaultMinPasswordLength without it).
func WithMinPasswordLength(n int) ServicesOption {
	return func(s *Services) { s.Users.minPassword = n }
}

// NewServices returns the services over database; run runs experiments
// and tasks, and metrics stores what trials report.
func NewServices(database *db.DB, run *Runner, metrics *MetricsWriter, logger *slog.Logger, opts ...ServicesOption) *Services {
	exps := run.Experiments
	taskUIDBase := resolute.DefaultTaskUIDBase // links are checked against the runner's
	if run.Tasks != nil {
		taskUIDBase = run.Tasks.c.opts.TaskUIDBase
	}
	s := &Services{
		Experiments:  exps,
		Tasks:        run.Tasks,
		Queue:        run.Queue,
		Workspaces:   &Workspaces{db: database, logger: logger},
		Projects:     &Projects{db: database, logger: logger},
		Trials:       &Trials{db: database, exps: exps, metrics: metrics},
		Checkpoints:  &Checkpoints{db: database, exps: exps},
		Allocations:  &Allocations{db: database},
		Models:       &Models{db: database, logger: logger},
		Templates:    &Templates{db: database, logger: logger},
		Users:        &Users{db: database, logger: logger, taskUIDBase: taskUIDBase, minPassword: DefaultMinPasswordLength},
		RunMetadata:  &RunMetadata{db: database},
		TaskOrigin:   NewTaskOrigin(database, time.Now),
		Groups:       &Groups{db: database, logger: logger},
		Roles:        &Roles{db: database, logger: logger},
		LogRetention: &LogRetention{db: database, defaultDays: -1, now: time.Now, logger: logger},
	}
	c := run.core()
	if c == nil { // a runner of no parts (tests of other services): the defaults
		c = NewRunner(database, nil, nil, RunOptions{}, logger).Queue.c
	}
	s.WorkspaceSettings = &WorkspaceSettings{db: database, c: c, logger: logger}
	s.Cluster = &Cluster{db: database, now: time.Now}
	if run.Admission != nil {
		s.Cluster.c, s.Cluster.adm, s.Cluster.now = run.Admission.c, run.Admission, run.Admission.c.now
	}
	sender := NewWebhookSender(database, "", "", logger) // not run: the runner's when it has one
	if run.Admission != nil && run.Admission.c.webhooks != nil {
		sender = run.Admission.c.webhooks
	}
	s.Webhooks = &Webhooks{db: database, sender: sender, logger: logger}
	for _, o := range opts {
		o(s)
	}
	s.TaskOrigin.actorOf = s.Roles.ActorOf
	if s.Tasks != nil {
		s.TaskOrigin.tunnel = s.Tasks.Tunnel
	}
	return s
}

// inTx runs fn in one transaction, committed when it returns no error, and
// returns its value.
func inTx[T any](ctx context.Context, d *db.DB, fn func(q *db.Queries) (T, error)) (T, error) {
	var out T
	err := d.InTx(ctx, func(q *db.Queries) error {
		var err error
		out, err = fn(q)
		return err
	})
	return out, err
}

// Limits on names and descriptions of workspaces, projects, models,
// templates and users.
const (
	MaxNameLen        = 128
	MaxDescriptionLen = 4096
)

// CheckName validates a name: not empty, no surrounding spaces, at most
// maxLen bytes, no control characters (resolute.HasControl: det prints
// names in other people's terminals). field names it in the message.
func CheckName(field, name string, maxLen int) error {
	switch {
	case strings.TrimSpace(name) == "":
		return resolute.Errorf(resolute.EInvalid, "%s: must not be empty", field)
	case strings.TrimSpace(name) != name:
		return resolute.Errorf(resolute.EInvalid, "%s: must not start or end with spaces", field)
	case len(name) > maxLen:
		return resolute.Errorf(resolute.EInvalid, "%s: must be at most %d characters", field, maxLen)
	case resolute.HasControl(name, ""):
		return resolute.Errorf(resolute.EInvalid, "%s: must not contain control characters", field)
	}
	return nil
}

// CheckDescription validates a description: at most maxLen bytes, and no
// control characters but newlines (a textarea's CRLF too) and tabs.
func CheckDescription(field, v string, maxLen int) error {
	if err := CheckLength(field, v, maxLen); err != nil {
		return err
	}
	if resolute.HasControl(strings.ReplaceAll(v, "\r\n", "\n"), "\n\t") {
		return resolute.Errorf(resolute.EInvalid, "%s: must not contain control characters other than newlines and tabs", field)
	}
	return nil
}

// CheckLength refuses a value longer than n bytes.
func CheckLength(field, v string, n int) error {
	if len(v) > n {
		return resolute.Errorf(resolute.EInvalid, "%s: must be at most %d characters", field, n)
	}
	return nil
}

// ValidUUID says whether s is a UUID as checkpoints are named
// (8-4-4-4-12 hexadecimal digits).
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
