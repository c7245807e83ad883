package control_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// people is a bootstrapped database with its administrator and two users.
type people struct {
	db                *db.DB
	svc               *control.Services
	admin, alice, bob authz.Actor
}

func newPeople(t *testing.T) people {
	t.Helper()
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	user := func(name string) authz.Actor {
		u, err := d.CreateUser(ctx, name, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		return authz.User(u)
	}
	return people{db: d, svc: control.NewServices(d, &control.Runner{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil))),
		admin: authz.User(admin.User), alice: user("alice"), bob: user("bob")}
}

func code(err error) string { return resolute.ErrorCode(err) }

func TestTheDefaultWorkspaceAndProjectCannotBeChanged(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	ws, _ := p.db.WorkspaceByName(ctx, resolute.DefaultWorkspaceName)
	projects, _ := p.db.Projects(ctx, db.ProjectFilter{WorkspaceID: &ws.ID})
	def := projects[0].ID
	tests := map[string]struct {
		run  func() error
		code string
	}{
		"renamed":             {func() error { _, err := p.svc.Workspaces.Rename(ctx, p.admin, ws.ID, "x"); return err }, resolute.EConflict},
		"archived":            {func() error { return p.svc.Workspaces.SetArchived(ctx, p.admin, ws.ID, true) }, resolute.EConflict},
		"deleted":             {func() error { return p.svc.Workspaces.Delete(ctx, p.admin, ws.ID) }, resolute.EConflict},
		"a duplicate name":    {func() error { _, err := p.svc.Workspaces.Create(ctx, p.alice, ws.Name); return err }, resolute.EConflict},
		"a missing workspace": {func() error { return p.svc.Workspaces.Delete(ctx, p.admin, 999) }, resolute.ENotFound},
		"the default project edits": {func() error {
			_, err := p.svc.Projects.Edit(ctx, p.admin, def, "Uncategorized", "mine now")
			return err
		}, resolute.EConflict},
		"the default project by another user": {func() error {
			_, err := p.svc.Projects.Edit(ctx, p.alice, def, "Uncategorized", "mine now")
			return err
		},
			resolute.EForbidden},
		"the default project archived": {func() error { return p.svc.Projects.SetArchived(ctx, p.admin, def, true) }, resolute.EConflict},
		"a name with spaces around":    {func() error { _, err := p.svc.Workspaces.Create(ctx, p.alice, " x "); return err }, resolute.EInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := code(tc.run()); got != tc.code {
				t.Fatalf("code = %q, want %q", got, tc.code)
			}
		})
	}
}

// TestAnotherUserCannotChangeSomeonesWorkspaceOrProject closes the hole
// where any signed-in user renamed, archived and deleted other users'
// workspaces and projects.
func TestAnotherUserCannotChangeSomeonesWorkspaceOrProject(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	ws, err := p.svc.Workspaces.Create(ctx, p.alice, "vision")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := p.svc.Projects.Create(ctx, p.alice, ws.ID, "detection", "boxes")
	if err != nil {
		t.Fatal(err)
	}
	// Anyone may add a project to someone's workspace (Determined's rule);
	// the workspace's owner may then change it too.
	bobs, err := p.svc.Projects.Create(ctx, p.bob, ws.ID, "bob's", "")
	if err != nil {
		t.Fatalf("bob adds a project to alice's workspace: %v", err)
	}
	refused := map[string]func() error{
		"rename workspace":  func() error { _, err := p.svc.Workspaces.Rename(ctx, p.bob, ws.ID, "mine"); return err },
		"archive workspace": func() error { return p.svc.Workspaces.SetArchived(ctx, p.bob, ws.ID, true) },
		"delete workspace":  func() error { return p.svc.Workspaces.Delete(ctx, p.bob, ws.ID) },
		"edit project":      func() error { _, err := p.svc.Projects.Edit(ctx, p.bob, proj.ID, "mine", ""); return err },
		"archive project":   func() error { return p.svc.Projects.SetArchived(ctx, p.bob, proj.ID, true) },
		"delete project":    func() error { _, err := p.svc.Projects.Delete(ctx, p.bob, proj.ID); return err },
	}
	for name, run := range refused {
		if got := code(run()); got != resolute.EForbidden {
			t.Errorf("bob may %s: code %q, want forbidden", name, got)
		}
	}
	if got, _ := p.db.Project(ctx, proj.ID); got.Name != "detection" || got.Description != "boxes" || got.Archived {
		t.Fatalf("the refused changes changed the project: %+v", got)
	}
	if _, err := p.svc.Projects.Edit(ctx, p.alice, bobs.ID, "bob's", "reviewed by alice"); err != nil {
		t.Errorf("the workspace's owner edits a project in it: %v", err)
	}
	if _, err := p.svc.Workspaces.Rename(ctx, p.admin, ws.ID, "vision2"); err != nil {
		t.Errorf("an administrator renames it: %v", err)
	}
}

func TestAWorkspaceIsDeletedOnlyWhenEmpty(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	ws, _ := p.svc.Workspaces.Create(ctx, p.alice, "vision")
	proj, err := p.svc.Projects.Create(ctx, p.alice, ws.ID, "detection", "boxes")
	if err != nil {
		t.Fatal(err)
	}
	if got := code(p.svc.Workspaces.Delete(ctx, p.alice, ws.ID)); got != resolute.EConflict {
		t.Fatalf("deleting a workspace with a project: code %q, want conflict", got)
	}
	if _, err := p.svc.Projects.Create(ctx, p.alice, ws.ID, "detection", ""); code(err) != resolute.EConflict {
		t.Fatalf("duplicate project name: %v", err)
	}
	if _, err := p.svc.Projects.Delete(ctx, p.alice, proj.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.svc.Workspaces.Delete(ctx, p.alice, ws.ID); err != nil {
		t.Fatal(err)
	}
}

func TestAnArchivedWorkspaceTakesNoNewProjects(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	ws, _ := p.svc.Workspaces.Create(ctx, p.alice, "old")
	if err := p.svc.Workspaces.SetArchived(ctx, p.alice, ws.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := p.svc.Projects.Create(ctx, p.alice, ws.ID, "p", ""); code(err) != resolute.EConflict {
		t.Fatalf("project in archived workspace: %v", err)
	}
	archived := true
	list, _ := p.db.Workspaces(ctx, &archived)
	if len(list) != 1 || list[0].Name != "old" {
		t.Fatalf("archived workspaces = %+v", list)
	}
}
