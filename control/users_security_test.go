package control_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// accounts is a cluster with an administrator and alice, whose services
// log into a buffer and take opts.
func accounts(t *testing.T, opts ...control.ServicesOption) (svc *control.Services, admin, alice authz.Actor, log *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	a, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	u, err := d.CreateUser(ctx, "alice", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	log = &bytes.Buffer{}
	svc = control.NewServices(d, &control.Runner{}, nil, slog.New(slog.NewTextHandler(log, nil)), opts...)
	return svc, authz.User(a.User), authz.User(u), log
}

func TestNewPasswordsMustBeLongEnough(t *testing.T) {
	ctx := context.Background()
	tests := map[string]struct {
		opts []control.ServicesOption
		set  func(svc *control.Services, admin, alice authz.Actor) error
		want string // the error's message; "" for none
	}{
		"a user created without a password has none, as Determined allows": {
			set: func(svc *control.Services, admin, _ authz.Actor) error {
				_, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol"}, "")
				return err
			}},
		"a user created with a 3-character password is refused": {
			set: func(svc *control.Services, admin, _ authz.Actor) error {
				_, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol"}, "abc")
				return err
			}, want: "password: must be at least 8 characters (got 3)"},
		"a user created with 8 characters is fine": {
			set: func(svc *control.Services, admin, _ authz.Actor) error {
				_, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol"}, "abcdefgh")
				return err
			}},
		"characters count, not bytes": {
			set: func(svc *control.Services, admin, _ authz.Actor) error {
				_, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol"}, "ééééééé")
				return err
			}, want: "password: must be at least 8 characters (got 7)"},
		"nobody sets their own password to the empty one": {
			set: func(svc *control.Services, _, alice authz.Actor) error {
				return svc.Users.SetPassword(ctx, alice, alice.UserID(), resolute.SetPasswordRequest{}, "")
			}, want: "password: must be at least 8 characters (got 0)"},
		"an administrator sets nobody's password to 7 characters": {
			set: func(svc *control.Services, admin, alice authz.Actor) error {
				return svc.Users.SetPassword(ctx, admin, alice.UserID(), resolute.SetPasswordRequest{Password: "1234567"}, "")
			}, want: "password: must be at least 8 characters (got 7)"},
		"the minimum is the master's to set": {
			opts: []control.ServicesOption{control.WithMinPasswordLength(12)},
			set: func(svc *control.Services, admin, alice authz.Actor) error {
				return svc.Users.SetPassword(ctx, admin, alice.UserID(), resolute.SetPasswordRequest{Password: "eleven-char"}, "")
			}, want: "password: must be at least 12 characters (got 11)"},
		"bcrypt's limit stays": {
			set: func(svc *control.Services, _, alice authz.Actor) error {
				return svc.Users.SetPassword(ctx, alice, alice.UserID(), resolute.SetPasswordRequest{Password: strings.Repeat("x", 73)}, "")
			}, want: "password: must be at most 72 bytes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			svc, admin, alice, _ := accounts(t, tc.opts...)
			err := tc.set(svc, admin, alice)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (resolute.ErrorCode(err) != resolute.EInvalid || resolute.ErrorMessage(err) != tc.want) {
				t.Fatalf("error %v, want invalid %q", err, tc.want)
			}
		})
	}
}

func TestAdministratorsChangesToUsersAreLogged(t *testing.T) {
	ctx := context.Background()
	svc, admin, alice, log := accounts(t)
	if _, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol", Admin: true}, "carols-secret"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Users.Edit(ctx, admin, alice.UserID(), resolute.PatchUserRequest{DisplayName: ptr("Alice A"), Admin: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Users.Edit(ctx, admin, alice.UserID(), resolute.PatchUserRequest{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Users.SetPassword(ctx, admin, alice.UserID(), resolute.SetPasswordRequest{Password: "alices-new-secret"}, ""); err != nil {
		t.Fatal(err)
	}
	// A refused change is not logged as made.
	if _, err := svc.Users.Edit(ctx, alice, alice.UserID(), resolute.PatchUserRequest{Admin: ptr(false)}); err == nil {
		t.Fatal("a deactivated alice changed herself")
	}
	got := log.String()
	for _, want := range []string{
		`msg="user created" username=carol user_id=`, `admin=true active=true has_password=true by=admin`,
		`msg="user changed" username=alice user_id=`, `by=admin display_name="Alice A" was="" admin=true`,
		`by=admin active=false`,
		`msg="user password set" username=alice user_id=`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, `msg="user changed"`); n != 2 {
		t.Errorf("%d changes logged, want 2:\n%s", n, got)
	}
	for _, secret := range []string{"carols-secret", "alices-new-secret"} {
		if strings.Contains(got, secret) {
			t.Errorf("the log shows a password:\n%s", got)
		}
	}
}

// TestDisplayNamesRefuseControlCharacters: det prints display names in
// other people's terminals, so an escape sequence in one is refused, at
// creation and at an edit; an empty one is still fine.
func TestDisplayNamesRefuseControlCharacters(t *testing.T) {
	ctx := context.Background()
	svc, admin, alice, _ := accounts(t)
	const want = "displayName: must not contain control characters"
	if _, err := svc.Users.Create(ctx, admin, resolute.UserSpec{Username: "carol", DisplayName: "Carol\x1b]0;pwned\x07"}, ""); resolute.ErrorMessage(err) != want {
		t.Errorf("create with an escape in the display name: %v", err)
	}
	for _, name := range []string{"Alice\x1b[2J", "Al\u202eice", "Alice\n"} {
		if _, err := svc.Users.Edit(ctx, alice, alice.UserID(), resolute.PatchUserRequest{DisplayName: &name}); resolute.ErrorMessage(err) != want {
			t.Errorf("edit to %q: %v", name, err)
		}
	}
	for _, name := range []string{"", "Alice Liddell", "Алиса"} {
		if _, err := svc.Users.Edit(ctx, alice, alice.UserID(), resolute.PatchUserRequest{DisplayName: &name}); err != nil {
			t.Errorf("edit to %q: %v", name, err)
		}
	}
}
