package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// origin is the task origin's service over people's database, with a clock
// the test moves.
type origin struct {
	people
	to       *control.TaskOrigin
	project  int64
	now      time.Time
	notebook string // alice's
	command  string // alice's
}

func newOrigin(t *testing.T) *origin {
	t.Helper()
	ctx := context.Background()
	o := &origin{people: newPeople(t), now: time.Now()}
	o.to = control.NewTaskOrigin(o.db, func() time.Time { return o.now })
	ws, err := o.db.WorkspaceByName(ctx, resolute.DefaultWorkspaceName)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := o.db.Projects(ctx, db.ProjectFilter{WorkspaceID: &ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	o.project = projects[0].ID
	task := func(typ string) string {
		id, err := o.db.CreateTask(ctx, db.NewTask{Type: typ, Config: []byte("{}"), UserID: o.alice.UserID(),
			ProjectID: o.project, ResourcePool: "default", ServiceToken: "jupyter"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	o.notebook, o.command = task(resolute.TaskNotebook), task(resolute.TaskCommand)
	return o
}

// actor reads a user again, as the handlers do on each request.
func (o *origin) actor(t *testing.T, name string) authz.Actor {
	t.Helper()
	u, err := o.db.UserByUsername(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return authz.User(u.User)
}

// open mints a ticket for username and redeems it.
func (o *origin) open(t *testing.T, username, taskID string) control.TaskSession {
	t.Helper()
	ctx := context.Background()
	tk, err := o.to.Ticket(ctx, o.actor(t, username), login(t, o.people.svc, username, ""), taskID, "tree")
	if err != nil {
		t.Fatalf("%s's ticket: %v", username, err)
	}
	ts, err := o.to.Redeem(ctx, tk.Token)
	if err != nil {
		t.Fatalf("redeem %s's ticket: %v", username, err)
	}
	return ts
}

func TestATicketIsUsedOnceAndOnlyWithinAMinute(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	session := login(t, o.people.svc, "alice", "")
	tk, err := o.to.Ticket(ctx, o.alice, session, o.notebook, "notebooks/a.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if tk.TaskID != o.notebook || tk.ExpiresAt.Sub(o.now) != control.TicketLifetime {
		t.Fatalf("ticket %+v", tk)
	}
	ts, err := o.to.Redeem(ctx, tk.Token)
	if err != nil {
		t.Fatal(err)
	}
	if ts.TaskID != o.notebook || ts.Path != "notebooks/a.ipynb" || ts.Token == "" || ts.Token == tk.Token {
		t.Fatalf("task session %+v", ts)
	}
	if _, err := o.to.Redeem(ctx, tk.Token); code(err) != resolute.EUnauthorized {
		t.Fatalf("the same ticket again: %v, want unauthorized", err)
	}

	// One that waited a minute is refused, and used up all the same.
	late, err := o.to.Ticket(ctx, o.alice, session, o.notebook, "")
	if err != nil {
		t.Fatal(err)
	}
	o.now = o.now.Add(control.TicketLifetime)
	if _, err := o.to.Redeem(ctx, late.Token); code(err) != resolute.EUnauthorized {
		t.Fatalf("a ticket a minute old: %v, want unauthorized", err)
	}
	o.now = o.now.Add(-time.Hour)
	if _, err := o.to.Redeem(ctx, late.Token); code(err) != resolute.EUnauthorized {
		t.Fatalf("an expired ticket tried again: %v, want unauthorized", err)
	}
	if _, err := o.to.Redeem(ctx, "made-up"); code(err) != resolute.EUnauthorized {
		t.Fatalf("a made-up ticket: %v", err)
	}
}

func TestOnlyTheOwnerAndAdministratorsGetTickets(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	bobSession := login(t, o.people.svc, "bob", "")
	tests := map[string]struct {
		actor   authz.Actor
		session string
		task    string
		code    string
	}{
		"another user":                   {o.bob, bobSession, o.notebook, resolute.EForbidden},
		"nobody":                         {authz.Actor{}, "", o.notebook, resolute.EUnauthorized},
		"a task's allocation":            {authz.Allocation(resolute.Allocation{ID: o.notebook + ".1", TaskID: o.notebook}), "", o.notebook, resolute.EForbidden},
		"the owner with another session": {o.alice, bobSession, o.notebook, resolute.EUnauthorized},
		"a task that serves no page":     {o.alice, login(t, o.people.svc, "alice", ""), o.command, resolute.ENotFound},
		"a task that does not exist":     {o.alice, login(t, o.people.svc, "alice", ""), "notebook-999", resolute.ENotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := o.to.Ticket(ctx, tc.actor, tc.session, tc.task, ""); code(err) != tc.code {
				t.Fatalf("ticket: %v, want %s", err, tc.code)
			}
		})
	}
	if _, err := o.to.Ticket(ctx, o.admin, login(t, o.people.svc, "admin", ""), o.notebook, ""); err != nil {
		t.Fatalf("the administrator's ticket: %v", err)
	}
}

func TestATaskSessionOpensOneTaskForOneUserWhileTheyMay(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	alices := o.open(t, "alice", o.notebook)
	if u, _, err := o.to.Visitor(ctx, alices.Token, o.notebook); err != nil || u.Username != "alice" {
		t.Fatalf("alice's task session: %+v, %v", u, err)
	}
	// Bound to its task: it opens no other.
	other, err := o.db.CreateTask(ctx, db.NewTask{Type: resolute.TaskNotebook, Config: []byte("{}"), UserID: o.alice.UserID(),
		ProjectID: o.project, ResourcePool: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.to.Visitor(ctx, alices.Token, other); code(err) != resolute.EUnauthorized {
		t.Fatalf("alice's session of %s opens %s: %v", o.notebook, other, err)
	}
	if _, _, err := o.to.Visitor(ctx, "", o.notebook); code(err) != resolute.EUnauthorized {
		t.Fatalf("no cookie: %v", err)
	}

	// An administrator's, until they are no longer one.
	admins := o.open(t, "admin", o.notebook)
	if u, _, err := o.to.Visitor(ctx, admins.Token, o.notebook); err != nil || u.Username != "admin" {
		t.Fatalf("the administrator's task session: %+v, %v", u, err)
	}
	if _, err := o.people.svc.Users.Edit(ctx, o.admin, o.bob.UserID(), resolute.PatchUserRequest{Admin: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	bobs := o.open(t, "bob", o.notebook)
	if _, err := o.people.svc.Users.Edit(ctx, o.admin, o.bob.UserID(), resolute.PatchUserRequest{Admin: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.to.Visitor(ctx, bobs.Token, o.notebook); code(err) != resolute.EForbidden {
		t.Fatalf("bob, an administrator no more: %v, want forbidden", err)
	}

	// It ends with its time, and with the master session it came from.
	o.now = alices.ExpiresAt
	if _, _, err := o.to.Visitor(ctx, alices.Token, o.notebook); code(err) != resolute.EUnauthorized {
		t.Fatalf("an expired task session: %v", err)
	}
	o.now = time.Now()
	session := login(t, o.people.svc, "alice", "")
	tk, err := o.to.Ticket(ctx, o.alice, session, o.notebook, "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := o.to.Redeem(ctx, tk.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.people.svc.Users.Logout(ctx, session); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.to.Visitor(ctx, ts.Token, o.notebook); code(err) != resolute.EUnauthorized {
		t.Fatalf("after signing out of the master: %v", err)
	}
}
