package control

import (
	"context"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// TaskOrigin lets people into what tasks serve (notebooks, TensorBoards) on
// the task origin, which never sees the master's session. A signed-in user
// who may open a task gets a ticket: short-lived, used once, for that task
// alone. The task origin redeems it for a task session, its own cookie for
// that task, and asks on every request whose it is and whether they may
// still open the task. Tickets and task sessions end with the master
// session that asked for them.
type TaskOrigin struct {
	db  *db.DB
	now func() time.Time
	// actorOf is a visitor's Actor (their roles under RBAC).
	actorOf func(context.Context, resolute.User) (authz.Actor, error)
	// tunnel is where the master reaches a task's port (Tasks.Tunnel).
	tunnel func(ctx context.Context, a authz.Actor, id string, port int) (string, error)
}

// visitor is u's Actor, as actorOf says, or under basic authorization.
func (s *TaskOrigin) visitor(ctx context.Context, u resolute.User) (authz.Actor, error) {
	if s.actorOf == nil {
		return authz.User(u), nil
	}
	return s.actorOf(ctx, u)
}

// TicketLifetime is how long a ticket waits to be redeemed.
const TicketLifetime = time.Minute

// maxTicketPath bounds the path a ticket leads to.
const maxTicketPath = 2048

// NewTaskOrigin returns the service over database, reading the time from
// now.
func NewTaskOrigin(database *db.DB, now func() time.Time) *TaskOrigin {
	return &TaskOrigin{db: database, now: now}
}

// Ticket is a ticket to open one task on the task origin.
type Ticket struct {
	// Token is the ticket itself; only its hash is stored.
	Token  string
	TaskID string
	// Port is the HTTP proxy port it opens, or 0 for the task's service.
	Port      int
	ExpiresAt time.Time
}

// TaskSession is a redeemed ticket: the task origin's cookie for one task.
type TaskSession struct {
	// Token is the cookie's value; only its hash is stored.
	Token  string
	TaskID string
	// Port is the HTTP proxy port it opens, or 0 for the task's service.
	Port int
	// Path is where the ticket leads, under /proxy/<task id>/ (or
	// /proxy/<task id>:<port>/).
	Path      string
	ExpiresAt time.Time
}

// servesPages says whether a task serves web pages through the proxy.
func servesPages(t resolute.Task) bool {
	return t.Type == resolute.TaskNotebook || t.Type == resolute.TaskTensorBoard
}

// mayOpen is the rule for opening what a task serves: its owner or an
// administrator (authz.OpenTask), a task that serves pages and has not
// ended.
func mayOpen(a authz.Actor, t resolute.Task) error {
	if err := authz.Can(a, authz.OpenTask, authz.Task(t)); err != nil {
		return err
	}
	if !servesPages(t) {
		return resolute.Errorf(resolute.ENotFound, "%s serves no web page", t.ID)
	}
	return nil
}

// Ticket makes a ticket for a, signed in with the master session whose
// token is session, to open task taskID at path (under /proxy/<task
// id>/): the task's owner or an administrator, a notebook or TensorBoard
// that has not ended.
func (s *TaskOrigin) Ticket(ctx context.Context, a authz.Actor, session, taskID, path string) (Ticket, error) {
	return s.ticket(ctx, a, session, taskID, 0, path)
}

// ticket makes a ticket to task taskID's service (port 0) or to one of its
// HTTP proxy ports (see PortTicket).
func (s *TaskOrigin) ticket(ctx context.Context, a authz.Actor, session, taskID string, port int, path string) (Ticket, error) {
	if len(path) > maxTicketPath || strings.ContainsAny(path, "\x00\r\n\t") {
		return Ticket{}, resolute.Errorf(resolute.EInvalid, "path: must be at most %d characters without control characters", maxTicketPath)
	}
	return inTx(ctx, s.db, func(q *db.Queries) (Ticket, error) {
		t, err := openableTask(ctx, q, a, taskID, port)
		if err != nil {
			return Ticket{}, err
		}
		if t.State == resolute.TaskTerminated {
			return Ticket{}, resolute.Errorf(resolute.EGone, "task %s has ended", t.ID)
		}
		u, sess, err := q.SessionUser(ctx, auth.HashToken(session))
		if resolute.ErrorCode(err) == resolute.ENotFound || err == nil && u.ID != a.UserID() {
			return Ticket{}, resolute.Errorf(resolute.EUnauthorized, "a ticket needs the session of a signed-in user")
		} else if err != nil {
			return Ticket{}, err
		}
		token, hash := auth.NewToken()
		tk := Ticket{Token: token, TaskID: t.ID, Port: port, ExpiresAt: s.now().Add(TicketLifetime)}
		err = q.CreateTaskTicket(ctx, hash, db.TaskTicket{TaskID: t.ID, UserID: u.ID, SessionID: sess.ID, Path: path, Port: port, ExpiresAt: tk.ExpiresAt})
		return tk, err
	})
}

// errBadTicket is the one answer to a ticket that does not open anything,
// whatever the reason, so that a guess learns nothing.
var errBadTicket = resolute.Errorf(resolute.EUnauthorized, "this link to a task has expired or was used already: open the task from the master again")

// Redeem uses a ticket up and, when it is still good and its user may
// still open its task, opens a task session for that task, which ends
// with the master session the ticket came from.
func (s *TaskOrigin) Redeem(ctx context.Context, ticket string) (TaskSession, error) {
	if ticket == "" {
		return TaskSession{}, errBadTicket
	}
	// Taken in a statement of its own: used up whatever follows, and by one
	// redemption only.
	tk, err := s.db.TakeTaskTicket(ctx, auth.HashToken(ticket))
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return TaskSession{}, errBadTicket
	} else if err != nil {
		return TaskSession{}, err
	}
	if !s.now().Before(tk.ExpiresAt) {
		return TaskSession{}, errBadTicket
	}
	return inTx(ctx, s.db, func(q *db.Queries) (TaskSession, error) {
		u, err := q.User(ctx, tk.UserID)
		if err != nil {
			return TaskSession{}, err
		}
		actor, err := s.visitor(ctx, u)
		if err != nil {
			return TaskSession{}, err
		}
		t, err := openableTask(ctx, q, actor, tk.TaskID, tk.Port)
		if err != nil {
			return TaskSession{}, err
		}
		expires, err := q.SessionExpiry(ctx, tk.SessionID)
		if resolute.ErrorCode(err) == resolute.ENotFound {
			return TaskSession{}, errBadTicket // signed out meanwhile
		} else if err != nil {
			return TaskSession{}, err
		}
		token, hash := auth.NewToken()
		ts := TaskSession{Token: token, TaskID: t.ID, Port: tk.Port, Path: tk.Path, ExpiresAt: expires}
		return ts, q.CreateTaskSession(ctx, hash, t.ID, tk.Port, u.ID, tk.SessionID, expires)
	})
}

// Visitor returns the user of the task session whose token is token, for
// task taskID, and the task, once it has asked again whether they may open
// it: an administrator who is no longer one, or a deactivated user, is
// refused at once.
func (s *TaskOrigin) Visitor(ctx context.Context, token, taskID string) (resolute.User, resolute.Task, error) {
	u, t, _, err := s.visit(ctx, token, taskID, 0)
	return u, t, err
}

// visit returns the user of the task session whose token is token, for
// task taskID's service (port 0) or its HTTP proxy port port, the task, and
// the user's Actor, once it has asked again whether they may open it.
func (s *TaskOrigin) visit(ctx context.Context, token, taskID string, port int) (resolute.User, resolute.Task, authz.Actor, error) {
	if token == "" {
		return resolute.User{}, resolute.Task{}, authz.Actor{}, resolute.Errorf(resolute.EUnauthorized, "open this task from the master")
	}
	u, _, err := s.db.TaskSessionUser(ctx, auth.HashToken(token), taskID, port, s.now())
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return resolute.User{}, resolute.Task{}, authz.Actor{}, resolute.Errorf(resolute.EUnauthorized, "open this task from the master")
	} else if err != nil {
		return resolute.User{}, resolute.Task{}, authz.Actor{}, err
	}
	if _, ok := trialOf(taskID); ok && port != 0 {
		actor, err := s.visitor(ctx, u)
		if err != nil {
			return u, resolute.Task{}, authz.Actor{}, err
		}
		t, err := openableTask(ctx, &s.db.Queries, actor, taskID, port)
		return u, t, actor, err
	}
	t, err := s.db.Task(ctx, taskID)
	if err != nil {
		return resolute.User{}, resolute.Task{}, authz.Actor{}, err
	}
	actor, err := s.visitor(ctx, u)
	if err != nil {
		return u, t, authz.Actor{}, err
	}
	return u, t, actor, mayOpenAt(actor, t, port)
}
