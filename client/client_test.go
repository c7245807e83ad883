package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// admin starts a master and returns a client logged in as admin.
func admin(t *testing.T) (*handlerstest.Master, *client.Client) {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{})
	resp, err := client.New(m.URL).Login(context.Background(), resolute.AdminUsername, "")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return m, client.New(m.URL, client.WithToken(resp.Token))
}

// wantError checks that err is a *resolute.Error with code and message.
func wantError(t *testing.T, err error, code, msg string) {
	t.Helper()
	var re *resolute.Error
	if !errors.As(err, &re) {
		t.Fatalf("err = %v (%T), want *resolute.Error", err, err)
	}
	if diff := cmp.Diff(resolute.Error{Code: code, Message: msg}, *re); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestLoginMeLogout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := handlerstest.Start(t, handlerstest.Options{InitialPassword: "s3cret"})
	anon := client.New(m.URL)

	_, err := anon.Login(ctx, "admin", "wrong")
	wantError(t, err, resolute.EUnauthorized, "invalid username or password")

	resp, err := anon.Login(ctx, "admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Token == "" || resp.User.Username != "admin" {
		t.Fatalf("login answered %+v", resp)
	}
	c := client.New(m.URL, client.WithToken(resp.Token))
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if me.Username != "admin" || !me.Admin {
		t.Errorf("Me = %+v, want admin", me)
	}
	if err := c.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.Me(ctx)
	if resolute.ErrorCode(err) != resolute.EUnauthorized {
		t.Errorf("Me after logout: err = %v, want unauthorized", err)
	}
}

func TestInfoNeedsNoSession(t *testing.T) {
	t.Parallel()
	m, c := admin(t)
	info, err := client.New(m.URL).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	master, err := c.Master(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info, master); diff != "" {
		t.Errorf("/info and /api/v1/master differ (-info +master):\n%s", diff)
	}
	if info.Version != resolute.Version {
		t.Errorf("version = %q, want %q", info.Version, resolute.Version)
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := admin(t)

	bob, err := c.CreateUser(ctx, resolute.UserSpec{Username: "bob", DisplayName: "Bob"}, "s3cret-pw")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateUser(ctx, resolute.UserSpec{Username: "bob"}, "")
	if resolute.ErrorCode(err) != resolute.EConflict {
		t.Errorf("second bob: err = %v, want conflict", err)
	}
	byName, err := c.UserByName(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	byID, err := c.User(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(byName, byID); diff != "" {
		t.Errorf("by name and by id differ:\n%s", diff)
	}
	users, err := c.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Username)
	}
	if diff := cmp.Diff([]string{"admin", "bob", "determined"}, names, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}

	no := false
	patched, err := c.PatchUser(ctx, bob.ID, resolute.PatchUserRequest{Active: &no})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Active || patched.DisplayName != "Bob" {
		t.Errorf("patched = %+v, want inactive Bob", patched)
	}

	if err := c.SetPassword(ctx, bob.ID, resolute.SetPasswordRequest{Password: "new-password"}); err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := c.PatchUser(ctx, bob.ID, resolute.PatchUserRequest{Active: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL).Login(ctx, "bob", "new-password"); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
	_, err = c.UserByName(ctx, "nobody")
	if resolute.ErrorCode(err) != resolute.ENotFound {
		t.Errorf("nobody: err = %v, want not_found", err)
	}
}

func TestWorkspacesAndProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c := admin(t)

	ws, err := c.CreateWorkspace(ctx, "vision")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateWorkspace(ctx, "vision")
	wantError(t, err, resolute.EConflict, `workspace "vision" already exists`)

	got, err := c.WorkspaceByName(ctx, "vision")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws, got); diff != "" {
		t.Errorf("by name (-created +found):\n%s", diff)
	}
	_, err = c.WorkspaceByName(ctx, "nope")
	wantError(t, err, resolute.ENotFound, `workspace "nope" not found`)

	p, err := c.CreateProject(ctx, ws.ID, "cats", "cat detector")
	if err != nil {
		t.Fatal(err)
	}
	if p.WorkspaceID != ws.ID || p.Description != "cat detector" {
		t.Errorf("project = %+v", p)
	}
	name := "dogs"
	p, err = c.PatchProject(ctx, p.ID, resolute.ProjectRequest{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "dogs" || p.Description != "cat detector" {
		t.Errorf("patched project = %+v, want dogs with the old description", p)
	}
	list, err := c.WorkspaceProjects(ctx, ws.ID, nil)
	if err != nil || len(list) != 1 || list[0].Name != "dogs" {
		t.Errorf("WorkspaceProjects = %+v, %v", list, err)
	}
	if err := c.ArchiveProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	no := false
	all, err := c.Projects(ctx, client.ProjectFilter{Archived: &no})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range all {
		if q.ID == p.ID {
			t.Errorf("archived project listed among unarchived ones")
		}
	}
	if err := c.UnarchiveProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteWorkspace(ctx, ws.ID)
	wantError(t, err, resolute.EConflict, `workspace "vision" is not empty: it has 1 project(s); delete or move them first`)
	if err := c.DeleteProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}

	if ws, err = c.RenameWorkspace(ctx, ws.ID, "vision2"); err != nil || ws.Name != "vision2" {
		t.Fatalf("rename: %+v, %v", ws, err)
	}
	if err := c.ArchiveWorkspace(ctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	yes := true
	archived, err := c.Workspaces(ctx, client.WorkspaceFilter{Archived: &yes})
	if err != nil || len(archived) != 1 || archived[0].ID != ws.ID {
		t.Errorf("archived workspaces = %+v, %v", archived, err)
	}
	if err := c.UnarchiveWorkspace(ctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteWorkspace(ctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Workspace(ctx, ws.ID)
	if resolute.ErrorCode(err) != resolute.ENotFound {
		t.Errorf("deleted workspace: err = %v, want not_found", err)
	}
}

func TestMasterLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := admin(t)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := c.CreateWorkspace(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := c.MasterLogs(ctx, false, 2, func(e resolute.LogEntry) error {
		got = append(got, e.Message)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"workspace created workspace=b user=admin", "workspace created workspace=c user=admin"}, got); diff != "" {
		t.Errorf("last two lines (-want +got):\n%s", diff)
	}

	// Following: read what is there, then a new line, then stop by cancelling.
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	seen := 0
	err = c.MasterLogs(fctx, true, 1, func(e resolute.LogEntry) error {
		seen++
		if seen == 1 {
			m.Logs.Add(time.Now(), "INFO", "hello from the test")
		} else if e.Message == "hello from the test" {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if fctx.Err() != context.Canceled {
		t.Errorf("follow ended with %v before the new line came", fctx.Err())
	}

	_, err = client.New(m.URL).Me(ctx)
	if resolute.ErrorCode(err) != resolute.EUnauthorized {
		t.Errorf("anonymous Me: err = %v", err)
	}
}

func TestErrorBodies(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		status int
		body   string
		want   resolute.Error
	}{
		"a JSON error keeps the server's code and message": {
			status: 409, body: `{"error":{"code":"conflict","message":"workspace \"x\" already exists"}}`,
			want: resolute.Error{Code: resolute.EConflict, Message: `workspace "x" already exists`},
		},
		"a JSON error without a code gets one from the status": {
			status: 404, body: `{"error":{"message":"gone fishing"}}`,
			want: resolute.Error{Code: resolute.ENotFound, Message: "gone fishing"},
		},
		"a text body is quoted after the status": {
			status: 502, body: "upstream down\n",
			want: resolute.Error{Code: resolute.EUnavailable, Message: "the master answered 502 Bad Gateway: upstream down"},
		},
		"an HTML page is not quoted": {
			status: 500, body: "<html><body>oops</body></html>",
			want: resolute.Error{Code: resolute.EInternal, Message: "the master answered 500 Internal Server Error"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := client.New(srv.URL).Me(context.Background())
			wantError(t, err, tc.want.Code, tc.want.Message)
		})
	}
}

func TestParseMasterURL(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in, want string
		err      bool
	}{
		"a bare host and port gets http": {in: "localhost:8080", want: "http://localhost:8080"},
		"a full URL stays":               {in: "https://det.example.com", want: "https://det.example.com"},
		"a trailing slash goes":          {in: "http://10.0.0.1:8080/", want: "http://10.0.0.1:8080"},
		"a bare host gets http":          {in: "master", want: "http://master"},
		"an empty address is an error":   {in: " ", err: true},
		"another scheme is an error":     {in: "ftp://master", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := client.ParseMasterURL(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
