package control

import (
	"context"
	"fmt"
	"regexp"

	"github.com/resolute-ml/resolute"
)

// Tasks run as Unix users, never as the master's (seeds: "Run tasks as
// specific agent users"): a user an administrator linked to an agent user
// and group runs as those; every other user as ids of their own,
// task_uid_base + their user id, so that no two users' tasks share a uid
// unless an administrator says so.

// agentNamePattern is what a linked user or group name may be: what
// useradd and groupadd accept by default (and a little more), nothing a
// shell, a log line or an environment variable would read differently.
var agentNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]{0,31}$`)

// MinAgentID is the least uid and gid a user may be linked to: those below
// are the system's own accounts and groups (Debian's SYS_UID_MAX is 999),
// such as the embedded database's user, whose files a task must not own.
const MinAgentID = 1000

// CheckAgentUserGroup checks a link an administrator asks for: uid and gid
// between MinAgentID and resolute.MaxTaskUID (0 is root's: tasks never run
// as root) and outside the default ids, base and above (another user's
// tasks run there), and names of 1-32 letters, digits, '.', '_' or '-'
// that start with a letter or '_'.
func CheckAgentUserGroup(g resolute.AgentUserGroup, base int) error {
	for _, id := range []struct {
		field string
		v     int
	}{{"agentUid", g.UID}, {"agentGid", g.GID}} {
		switch {
		case id.v == 0:
			return resolute.Errorf(resolute.EInvalid, "%s: 0 is root's; tasks never run as root", id.field)
		case id.v < 0 || id.v > resolute.MaxTaskUID:
			return resolute.Errorf(resolute.EInvalid, "%s: must be between %d and %d (got %d)", id.field, MinAgentID, resolute.MaxTaskUID, id.v)
		case id.v < MinAgentID:
			return resolute.Errorf(resolute.EInvalid, "%s: %d belongs to the system (ids below %d), such as the database's; "+
				"link the uid and gid of a person or a service account", id.field, id.v, MinAgentID)
		case id.v >= base:
			return resolute.Errorf(resolute.EInvalid, "%s: %d is at or above task_uid_base (%d), where unlinked users' tasks run; link ids below it",
				id.field, id.v, base)
		}
	}
	for _, name := range []struct{ field, v string }{{"agentUser", g.User}, {"agentGroup", g.Group}} {
		if !agentNamePattern.MatchString(name.v) {
			return resolute.Errorf(resolute.EInvalid, "%s: use 1-32 letters, digits, '.', '_' or '-', starting with a letter or '_' (got %q)",
				name.field, name.v)
		}
	}
	return nil
}

// DefaultTaskUser is what an unlinked user's tasks run as: uid and gid
// base + their id, named after them.
func DefaultTaskUser(base int, u resolute.User) (resolute.TaskUser, error) {
	id := int64(base) + u.ID
	if u.ID <= 0 || id > resolute.MaxTaskUID {
		return resolute.TaskUser{}, resolute.Errorf(resolute.EInvalid,
			"user %s (id %d) has no default task uid: task_uid_base %d + %d is past %d", u.Username, u.ID, base, u.ID, resolute.MaxTaskUID)
	}
	return resolute.TaskUser{UID: int(id), GID: int(id), User: u.Username, Group: u.Username}, nil
}

// taskUserOf is what u's tasks run as: their link, or their default ids.
func taskUserOf(base int, u resolute.User) (resolute.TaskUser, error) {
	if g := u.AgentUserGroup; g != nil {
		return resolute.TaskUser{UID: g.UID, GID: g.GID, User: g.User, Group: g.Group, Linked: true}, nil
	}
	return DefaultTaskUser(base, u)
}

// taskUser is what the tasks of user id in a workspace with settings ws
// run as (TaskUserIn): the workspace's agent user, their link, or their
// default ids.
func (c *core) taskUser(ctx context.Context, userID int64, ws resolute.WorkspaceSettings) (resolute.TaskUser, error) {
	u, err := c.db.User(ctx, userID)
	if err != nil {
		return resolute.TaskUser{}, fmt.Errorf("the task's owner: %w", err)
	}
	return TaskUserIn(c.opts.TaskUIDBase, ws, u)
}
