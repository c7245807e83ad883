package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

func ptr[T any](v T) *T { return &v }

// login opens a session for username through the service and returns its
// token.
func login(t *testing.T, svc *control.Services, username, password string) string {
	t.Helper()
	token, _, err := svc.Users.Login(context.Background(), username, password, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("login %s: %v", username, err)
	}
	return token
}

// TestAUserCannotChangeAnotherAccountNorAdministerThemselves: the admin-only
// routes are a first gate; the service refuses on its own too, and the
// refusals change nothing.
func TestAUserCannotChangeAnotherAccountNorAdministerThemselves(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	alice, bob := p.alice.UserID(), p.bob.UserID()
	refused := map[string]func() error{
		"create a user": func() error {
			_, err := p.svc.Users.Create(ctx, p.bob, resolute.UserSpec{Username: "eve"}, "s3cret-pw")
			return err
		},
		"rename alice": func() error {
			_, err := p.svc.Users.Edit(ctx, p.bob, alice, resolute.PatchUserRequest{DisplayName: ptr("Bob's")})
			return err
		},
		"deactivate alice": func() error {
			_, err := p.svc.Users.Edit(ctx, p.bob, alice, resolute.PatchUserRequest{Active: ptr(false)})
			return err
		},
		"make himself admin": func() error {
			_, err := p.svc.Users.Edit(ctx, p.bob, bob, resolute.PatchUserRequest{DisplayName: ptr("Boss"), Admin: ptr(true)})
			return err
		},
		"set alice's password": func() error {
			return p.svc.Users.SetPassword(ctx, p.bob, alice, resolute.SetPasswordRequest{Password: "mine"}, "")
		},
		"set the admin's password": func() error {
			return p.svc.Users.SetPassword(ctx, p.bob, p.admin.UserID(), resolute.SetPasswordRequest{Password: "mine"}, "")
		},
		"edit anyone as a task's allocation": func() error {
			al := authz.Allocation(resolute.Allocation{ID: "trial-1.1", TaskID: "trial-1"})
			_, err := p.svc.Users.Edit(ctx, al, bob, resolute.PatchUserRequest{Admin: ptr(true)})
			return err
		},
	}
	for name, run := range refused {
		if got := code(run()); got != resolute.EForbidden {
			t.Errorf("bob may %s: code %q, want forbidden", name, got)
		}
	}
	if _, err := p.db.UserByUsername(ctx, "eve"); code(err) != resolute.ENotFound {
		t.Errorf("the refused user exists: %v", err)
	}
	if a, _ := p.db.UserByUsername(ctx, "alice"); a.DisplayName != "" || !a.Active || a.HasPassword {
		t.Errorf("the refused changes changed alice: %+v", a.User)
	}
	if b, _ := p.db.User(ctx, bob); b.Admin || b.DisplayName != "" {
		t.Errorf("bob changed himself: %+v", b)
	}
	if _, _, err := p.svc.Users.Login(ctx, "admin", "mine", time.Now().Add(time.Hour)); code(err) != resolute.EUnauthorized {
		t.Errorf("bob set the admin's password: %v", err)
	}
}

func TestAUserChangesTheirOwnDisplayNameAndPassword(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	alice := p.alice.UserID()
	u, err := p.svc.Users.Edit(ctx, p.alice, alice, resolute.PatchUserRequest{DisplayName: ptr("Alice A"), Admin: ptr(false), Active: ptr(true)})
	if err != nil || u.DisplayName != "Alice A" {
		t.Fatalf("alice renames herself, her flags as they are: %+v, %v", u, err)
	}
	// alice has no password yet: her current one is empty.
	if err := p.svc.Users.SetPassword(ctx, p.alice, alice, resolute.SetPasswordRequest{Password: "password-one"}, ""); err != nil {
		t.Fatalf("alice sets her first password: %v", err)
	}
	kept, ended := login(t, p.svc, "alice", "password-one"), login(t, p.svc, "alice", "password-one")
	err = p.svc.Users.SetPassword(ctx, p.alice, alice, resolute.SetPasswordRequest{Password: "password-two", OldPassword: "wrong"}, kept)
	if code(err) != resolute.EInvalid || resolute.ErrorMessage(err) != "oldPassword: is not your current password" {
		t.Fatalf("a wrong current password: %v", err)
	}
	if err := p.svc.Users.SetPassword(ctx, p.alice, alice, resolute.SetPasswordRequest{Password: "password-two", OldPassword: "password-one"}, kept); err != nil {
		t.Fatalf("alice changes her password: %v", err)
	}
	if _, _, err := p.db.SessionUser(ctx, auth.HashToken(kept)); err != nil {
		t.Errorf("the session alice changed her password in ended: %v", err)
	}
	if _, _, err := p.db.SessionUser(ctx, auth.HashToken(ended)); code(err) != resolute.ENotFound {
		t.Errorf("alice's other session survived her new password: %v", err)
	}
	login(t, p.svc, "alice", "password-two")
}

func TestAnAdministratorManagesEveryAccount(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	carol, err := p.svc.Users.Create(ctx, p.admin, resolute.UserSpec{Username: "carol", DisplayName: "Carol", Active: ptr(false)}, "s3cret-pw")
	if err != nil || carol.Active || !carol.HasPassword {
		t.Fatalf("create an inactive user with a password: %+v, %v", carol, err)
	}
	alice := p.alice.UserID()
	session := login(t, p.svc, "alice", "")
	if err := p.svc.Users.SetPassword(ctx, p.admin, alice, resolute.SetPasswordRequest{Password: "reset-password"}, ""); err != nil {
		t.Fatalf("an administrator resets alice's password without her current one: %v", err)
	}
	if _, _, err := p.db.SessionUser(ctx, auth.HashToken(session)); code(err) != resolute.ENotFound {
		t.Errorf("alice's session survived the reset: %v", err)
	}
	session = login(t, p.svc, "alice", "reset-password")
	u, err := p.svc.Users.Edit(ctx, p.admin, alice, resolute.PatchUserRequest{DisplayName: ptr("A"), Admin: ptr(true)})
	if err != nil || !u.Admin || u.DisplayName != "A" {
		t.Fatalf("make alice an administrator: %+v, %v", u, err)
	}
	if _, err := p.svc.Users.Edit(ctx, p.admin, alice, resolute.PatchUserRequest{Active: ptr(false)}); err != nil {
		t.Fatalf("deactivate alice: %v", err)
	}
	if _, _, err := p.db.SessionUser(ctx, auth.HashToken(session)); code(err) != resolute.ENotFound {
		t.Errorf("a deactivated user's session survived: %v", err)
	}
	if _, _, err := p.svc.Users.Login(ctx, "alice", "reset-password", time.Now().Add(time.Hour)); code(err) != resolute.EUnauthorized {
		t.Errorf("a deactivated user logs in: %v", err)
	}
}

func TestTheLastAdministratorStays(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	admin := p.admin.UserID()
	if _, err := p.svc.Users.Edit(ctx, p.admin, admin, resolute.PatchUserRequest{Admin: ptr(false)}); code(err) != resolute.EConflict {
		t.Fatalf("removing the last admin: %v", err)
	}
	if _, err := p.svc.Users.Edit(ctx, p.admin, admin, resolute.PatchUserRequest{Active: ptr(false)}); code(err) != resolute.EConflict {
		t.Fatalf("deactivating the last admin: %v", err)
	}
	if u, _ := p.db.User(ctx, admin); !u.Admin || !u.Active {
		t.Fatalf("the refused change stuck: %+v", u)
	}
	if _, err := p.svc.Users.Edit(ctx, p.admin, p.alice.UserID(), resolute.PatchUserRequest{Admin: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.svc.Users.Edit(ctx, p.admin, admin, resolute.PatchUserRequest{Admin: ptr(false)}); err != nil {
		t.Fatalf("an administrator steps down when another remains: %v", err)
	}
}

func TestLoginAndLogout(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	if _, err := p.svc.Users.Create(ctx, p.admin, resolute.UserSpec{Username: "dave"}, "s3cret-pw"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"dave", "wrong"}, {"nobody", "s3cret-pw"}} {
		_, _, err := p.svc.Users.Login(ctx, bad[0], bad[1], time.Now().Add(time.Hour))
		if code(err) != resolute.EUnauthorized || resolute.ErrorMessage(err) != "invalid username or password" {
			t.Errorf("login %s/%s: %v", bad[0], bad[1], err)
		}
	}
	token := login(t, p.svc, "dave", "s3cret-pw")
	if u, _, err := p.db.SessionUser(ctx, auth.HashToken(token)); err != nil || u.Username != "dave" {
		t.Fatalf("the session is dave's: %+v, %v", u, err)
	}
	if err := p.svc.Users.Logout(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.db.SessionUser(ctx, auth.HashToken(token)); code(err) != resolute.ENotFound {
		t.Fatalf("the session outlived its logout: %v", err)
	}
}
