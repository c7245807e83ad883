package db

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// TaskTicket is a stored ticket to open one task on the task origin; the
// token itself is never stored, only its hash.
type TaskTicket struct {
	TaskID    string
	UserID    int64
	SessionID int64 // the master session that asked for it
	Path      string
	// Port is one of the task's HTTP proxy ports, or 0 for its own service.
	Port      int
	ExpiresAt time.Time
}

// CreateTaskTicket stores a ticket under its token's hash.
func (q *Queries) CreateTaskTicket(ctx context.Context, tokenHash []byte, t TaskTicket) error {
	return translate(q.q.CreateTaskTicket(ctx, gen.CreateTaskTicketParams{TokenHash: tokenHash, TaskID: t.TaskID,
		UserID: t.UserID, SessionID: t.SessionID, Path: t.Path, ExpiresAt: t.ExpiresAt, Port: int32(t.Port)}), "ticket of task %s", t.TaskID)
}

// TakeTaskTicket removes the ticket with tokenHash and returns it, expired
// or not; not_found when there is none (never made, or used already).
func (q *Queries) TakeTaskTicket(ctx context.Context, tokenHash []byte) (TaskTicket, error) {
	t, err := q.q.TakeTaskTicket(ctx, tokenHash)
	return TaskTicket{TaskID: t.TaskID, UserID: t.UserID, SessionID: t.SessionID, Path: t.Path, Port: int(t.Port), ExpiresAt: t.ExpiresAt},
		translate(err, "ticket")
}

// SessionExpiry returns when the master session with id ends.
func (q *Queries) SessionExpiry(ctx context.Context, id int64) (time.Time, error) {
	t, err := q.q.GetSessionExpiry(ctx, id)
	return t, translate(err, "session")
}

// CreateTaskSession stores a task session (the task origin's cookie for
// one task's service, port 0, or one of its HTTP proxy ports) under its
// token's hash.
func (q *Queries) CreateTaskSession(ctx context.Context, tokenHash []byte, taskID string, port int, userID, sessionID int64, expires time.Time) error {
	return translate(q.q.CreateTaskSession(ctx, gen.CreateTaskSessionParams{TokenHash: tokenHash, TaskID: taskID, Port: int32(port),
		UserID: userID, SessionID: sessionID, ExpiresAt: expires}), "session of task %s", taskID)
}

// TaskSessionUser returns the active user of the task session with
// tokenHash for task taskID's service (port 0) or HTTP proxy port port,
// live at now, and when it ends.
func (q *Queries) TaskSessionUser(ctx context.Context, tokenHash []byte, taskID string, port int, now time.Time) (resolute.User, time.Time, error) {
	row, err := q.q.GetTaskSessionUser(ctx, gen.GetTaskSessionUserParams{TokenHash: tokenHash, TaskID: taskID, Port: int32(port), Now: now})
	if err != nil {
		return resolute.User{}, time.Time{}, translate(err, "session of task %s", taskID)
	}
	return toUser(row.User), row.ExpiresAt, nil
}

// DeleteExpiredTaskCredentials removes expired tickets and task sessions
// and counts them.
func (q *Queries) DeleteExpiredTaskCredentials(ctx context.Context) (int64, error) {
	tickets, err := q.q.DeleteExpiredTaskTickets(ctx)
	if err != nil {
		return 0, translate(err, "expired tickets")
	}
	sessions, err := q.q.DeleteExpiredTaskSessions(ctx)
	return tickets + sessions, translate(err, "expired task sessions")
}
