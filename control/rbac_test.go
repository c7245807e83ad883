package control_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// rbacWorld is a database with services under RBAC, an administrator, two
// users and two workspaces, and the master log as text.
type rbacWorld struct {
	db           *db.DB
	svc          *control.Services
	log          *bytes.Buffer
	admin        authz.Actor
	ann, ben     resolute.User
	wsA, wsB     resolute.Workspace
	projA, projB resolute.Project
}

func newRBACWorld(t *testing.T) *rbacWorld {
	t.Helper()
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	w := &rbacWorld{db: d, log: &bytes.Buffer{}}
	w.svc = control.NewServices(d, &control.Runner{}, nil, slog.New(slog.NewTextHandler(w.log, nil)), control.WithRBAC())
	admin, err := d.UserByUsername(ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	w.admin = w.actor(t, admin.User)
	for _, u := range []*resolute.User{&w.ann, &w.ben} {
		name := "ann"
		if u == &w.ben {
			name = "ben"
		}
		if *u, err = d.CreateUser(ctx, name, "", "", false); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []struct {
		ws *resolute.Workspace
		p  *resolute.Project
		n  string
	}{{&w.wsA, &w.projA, "a"}, {&w.wsB, &w.projB, "b"}} {
		if *x.ws, err = w.svc.Workspaces.Create(ctx, w.admin, x.n); err != nil {
			t.Fatal(err)
		}
		if *x.p, err = w.svc.Projects.Create(ctx, w.admin, x.ws.ID, "p", ""); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// actor is u's Actor as a request would have it: their roles read now.
func (w *rbacWorld) actor(t *testing.T, u resolute.User) authz.Actor {
	t.Helper()
	a, err := w.svc.Roles.ActorOf(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEveryRolesListsMatchWhatCanReads checks that the lists' SQL filter
// and authz.Can agree, role by role: a user holding one role in workspace
// a sees in each list exactly what Can lets them read, and nothing of b.
func TestEveryRolesListsMatchWhatCanReads(t *testing.T) {
	ctx := context.Background()
	w := newRBACWorld(t)
	if _, err := w.svc.Models.Create(ctx, w.admin, resolute.ModelRequest{Name: new("m-a"), WorkspaceID: w.wsA.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Models.Create(ctx, w.admin, resolute.ModelRequest{Name: new("m-b"), WorkspaceID: w.wsB.ID}); err != nil {
		t.Fatal(err)
	}
	for _, info := range authz.Roles() {
		t.Run(string(info.Name), func(t *testing.T) {
			as := control.Assignment{Role: string(info.Name), UserID: w.ann.ID}
			if !info.GlobalOnly {
				as.WorkspaceID = w.wsA.ID
			}
			if err := w.svc.Roles.Assign(ctx, w.admin, []control.Assignment{as}); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := w.svc.Roles.Unassign(ctx, w.admin, []control.Assignment{as}); err != nil {
					t.Fatal(err)
				}
			}()
			a := w.actor(t, w.ann)
			viewer := func(p authz.Permission) db.Viewer {
				v := authz.Visible(a, p)
				return db.Viewer{Filtered: !v.All, UserID: v.UserID, Roles: v.Roles}
			}
			workspaces, err := w.db.WorkspacesFor(ctx, nil, viewer(authz.ViewWorkspace))
			if err != nil {
				t.Fatal(err)
			}
			for _, ws := range []resolute.Workspace{w.wsA, w.wsB} {
				listed := slices.ContainsFunc(workspaces, func(x resolute.Workspace) bool { return x.ID == ws.ID })
				if can := authz.Can(a, authz.Read, authz.Workspace(ws)) == nil; listed != can {
					t.Errorf("workspace %s: listed %v, Can read %v", ws.Name, listed, can)
				}
			}
			projects, err := w.db.Projects(ctx, db.ProjectFilter{Viewer: viewer(authz.ViewProject)})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []resolute.Project{w.projA, w.projB} {
				listed := slices.ContainsFunc(projects, func(x resolute.Project) bool { return x.ID == p.ID })
				if can := authz.Can(a, authz.Read, authz.Project(p, 0)) == nil; listed != can {
					t.Errorf("project of %s: listed %v, Can read %v", p.WorkspaceName, listed, can)
				}
			}
			models, err := w.db.Models(ctx, db.ModelFilter{Viewer: viewer(authz.ViewModelRegistry)})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"m-a", "m-b"} {
				m, err := w.db.Model(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				listed := slices.ContainsFunc(models, func(x resolute.Model) bool { return x.Name == name })
				if can := authz.Can(a, authz.Read, authz.Model(m)) == nil; listed != can {
					t.Errorf("model %s: listed %v, Can read %v", name, listed, can)
				}
			}
		})
	}
}

func TestRolesAreAssignedOnlyWhereTheyMayBe(t *testing.T) {
	ctx := context.Background()
	w := newRBACWorld(t)
	tests := map[string]struct {
		by   authz.Actor
		as   control.Assignment
		want string
	}{
		"an unknown role is not found":              {w.admin, control.Assignment{Role: "Overlord", UserID: w.ann.ID}, resolute.ENotFound},
		"a cluster-only role is not for workspaces": {w.admin, control.Assignment{Role: "ClusterAdmin", UserID: w.ann.ID, WorkspaceID: w.wsA.ID}, resolute.EInvalid},
		"a user and a group at once is invalid":     {w.admin, control.Assignment{Role: "Viewer", UserID: w.ann.ID, GroupID: 1}, resolute.EInvalid},
		"a missing user is not found":               {w.admin, control.Assignment{Role: "Viewer", UserID: 9999}, resolute.ENotFound},
		"a user without a role assigns none":        {w.actor(t, w.ben), control.Assignment{Role: "Viewer", UserID: w.ben.ID, WorkspaceID: w.wsA.ID}, resolute.EForbidden},
		"an administrator assigns by role id":       {w.admin, control.Assignment{Role: "4", UserID: w.ann.ID, WorkspaceID: w.wsA.ID}, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := code(w.svc.Roles.Assign(ctx, tt.by, []control.Assignment{tt.as})); got != tt.want {
				t.Errorf("code %q, want %q", got, tt.want)
			}
		})
	}
	// All or none: one refused assignment leaves the others ungranted.
	err := w.svc.Roles.Assign(ctx, w.admin, []control.Assignment{{Role: "Editor", UserID: w.ben.ID, WorkspaceID: w.wsB.ID},
		{Role: "Nope", UserID: w.ben.ID}})
	if code(err) != resolute.ENotFound {
		t.Fatalf("a batch with an unknown role: %v", err)
	}
	if p, _ := w.svc.Roles.Permissions(ctx, w.ben.ID); len(p.Workspaces[w.wsB.ID]) != 0 {
		t.Errorf("ben holds %v after a refused batch", p.Workspaces[w.wsB.ID])
	}
	if err := w.svc.Roles.Unassign(ctx, w.admin, []control.Assignment{{Role: "Editor", UserID: w.ben.ID, WorkspaceID: w.wsB.ID}}); code(err) != resolute.ENotFound {
		t.Errorf("revoking what is not held: %v", err)
	}
}

func TestAWorkspacesCreatorAdministersItAndAGroupsRolesReachItsMembers(t *testing.T) {
	ctx := context.Background()
	w := newRBACWorld(t)
	// ann may create workspaces only as a WorkspaceCreator, and is then
	// the new workspace's admin.
	if _, err := w.svc.Workspaces.Create(ctx, w.actor(t, w.ann), "mine"); code(err) != resolute.EForbidden {
		t.Fatalf("ann creates a workspace without a role: %v", err)
	}
	if err := w.svc.Roles.Assign(ctx, w.admin, []control.Assignment{{Role: "WorkspaceCreator", UserID: w.ann.ID}}); err != nil {
		t.Fatal(err)
	}
	mine, err := w.svc.Workspaces.Create(ctx, w.actor(t, w.ann), "mine")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.svc.Roles.Assign(ctx, w.actor(t, w.ann), []control.Assignment{{Role: "Viewer", UserID: w.ben.ID, WorkspaceID: mine.ID}}); err != nil {
		t.Errorf("the creator assigns in their workspace: %v", err)
	}
	if err := w.svc.Roles.Assign(ctx, w.actor(t, w.ann), []control.Assignment{{Role: "Viewer", UserID: w.ben.ID, WorkspaceID: w.wsA.ID}}); code(err) != resolute.EForbidden {
		t.Errorf("the creator assigns in another workspace: %v", err)
	}

	// A group's Editor role in b reaches ben while he is a member.
	g, err := w.svc.Groups.Create(ctx, w.admin, "ml", []int64{w.ben.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Groups.Create(ctx, w.actor(t, w.ann), "mine", nil); code(err) != resolute.EForbidden {
		t.Errorf("a WorkspaceCreator creates a group: %v", err)
	}
	if err := w.svc.Roles.Assign(ctx, w.admin, []control.Assignment{{Role: "Editor", GroupID: g.ID, WorkspaceID: w.wsB.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Projects.Create(ctx, w.actor(t, w.ben), w.wsB.ID, "bens", ""); err != nil {
		t.Errorf("ben creates a project in b through the group: %v", err)
	}
	if _, err := w.svc.Groups.Update(ctx, w.admin, g.ID, "ml-team", nil, []int64{w.ben.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Projects.Create(ctx, w.actor(t, w.ben), w.wsB.ID, "bens2", ""); code(err) != resolute.EForbidden {
		t.Errorf("ben out of the group creates a project in b: %v", err)
	}
	if err := w.svc.Groups.Delete(ctx, w.admin, g.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := w.db.RoleAssignments(ctx, db.AssignmentFilter{GroupID: &g.ID}); len(list) != 0 {
		t.Errorf("a deleted group's roles remain: %+v", list)
	}
	log := w.log.String()
	for _, want := range []string{
		`msg="role assigned" role=WorkspaceAdmin to="user ann" scope="workspace \"mine\"" by=ann`,
		`msg="role assigned" role=Viewer to="user ben" scope="workspace \"mine\"" by=ann`,
		`msg="user group created" group=ml by=admin`,
		`msg="user group member added" group=ml user=ben by=admin`,
		`msg="user group renamed" group=ml name=ml-team by=admin`,
		`msg="user group member removed" group=ml-team user=ben by=admin`,
		`msg="user group deleted" group=ml-team by=admin`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
}
