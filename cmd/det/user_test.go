package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestLoginWhoamiLogout(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})

	c.loginAdmin()
	info, err := os.Stat(c.authFile())
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("auth.json mode = %o, want 600", perm)
	}
	dir, _ := os.Stat(strings.TrimSuffix(c.authFile(), "/auth.json"))
	if perm := dir.Mode().Perm(); perm != 0o700 {
		t.Errorf("config dir mode = %o, want 700", perm)
	}
	var store storeFile
	b, _ := os.ReadFile(c.authFile())
	if err := json.Unmarshal(b, &store); err != nil {
		t.Fatal(err)
	}
	if ms := store.Masters[c.m.URL]; ms == nil || ms.ActiveUser != "admin" || ms.Tokens["admin"] == "" {
		t.Fatalf("auth.json = %s, want admin active for %s", b, c.m.URL)
	}

	if got := c.ok("", "user", "whoami"); got != "You are logged in as user 'admin'\n" {
		t.Errorf("whoami = %q", got)
	}
	token := store.Masters[c.m.URL].Tokens["admin"]
	c.ok("", "user", "logout")
	if _, err := client.New(c.m.URL, client.WithToken(token)).Me(context.Background()); resolute.ErrorCode(err) != resolute.EUnauthorized {
		t.Errorf("the token still works after logout: %v", err)
	}
	b, _ = os.ReadFile(c.authFile())
	if strings.Contains(string(b), token) {
		t.Errorf("auth.json still holds the token after logout: %s", b)
	}
	// As Determined's det, no session means trying determined with no password.
	if got := c.ok("", "user", "whoami"); got != "You are logged in as user 'determined'\n" {
		t.Errorf("whoami after logout = %q", got)
	}
}

func TestNotLoggedIn(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{InitialPassword: "s3cret"})
	r := c.run("", "workspace", "list")
	want := result{stderr: "Error: not logged in to " + c.m.URL + ": run `det user login`\n", code: 1}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoginErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{InitialPassword: "s3cret"})
	tests := map[string]struct {
		stdin string
		args  []string
		want  result
	}{
		"a wrong password prints the server's message": {
			stdin: "wrong\n", args: []string{"user", "login", "admin"},
			want: result{stderr: "Error: invalid username or password\n", code: 1},
		},
		"an unknown user gets the same message": {
			stdin: "s3cret\n", args: []string{"user", "login", "nobody"},
			want: result{stderr: "Error: invalid username or password\n", code: 1},
		},
		"too many arguments are a usage error": {
			args: []string{"user", "login", "a", "b"},
			want: result{stderr: "Error: accepts at most 1 arg(s), received 2\nRun 'det user login --help' for usage.\n", code: 2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := c.run(tc.stdin, tc.args...)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoginReadsDetPass(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{InitialPassword: "s3cret"})
	c.env["DET_USER"] = "admin"
	c.env["DET_PASS"] = "s3cret"
	c.ok("this line must not be read\n", "user", "login")
	delete(c.env, "DET_PASS")
	delete(c.env, "DET_USER")
	if got := c.ok("", "user", "whoami"); got != "You are logged in as user 'admin'\n" {
		t.Errorf("whoami = %q", got)
	}
}

func TestPasswordPrompt(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		env   map[string]string
		stdin string
		want  string
	}{
		"DET_PASS wins over stdin":              {env: map[string]string{"DET_PASS": "from-env"}, stdin: "from-stdin\n", want: "from-env"},
		"without DET_PASS stdin is read":        {stdin: "from-stdin\nnext\n", want: "from-stdin"},
		"an empty line is the empty password":   {stdin: "\n", want: ""},
		"no input at all is the empty password": {stdin: "", want: ""},
		"a Windows line ending is dropped":      {stdin: "pw\r\n", want: "pw"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := &app{stdin: strings.NewReader(tc.stdin), stderr: &strings.Builder{},
				getenv: func(k string) string { return tc.env[k] }}
			got, err := a.password("Password: ")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("password = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUserTokenEnv(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{InitialPassword: "s3cret"})
	resp, err := client.New(c.m.URL).Login(context.Background(), "admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	c.env["DET_USER_TOKEN"] = resp.Token
	if got := c.ok("", "u", "whoami"); got != "You are logged in as user 'admin'\n" {
		t.Errorf("whoami = %q", got)
	}
	if _, err := os.Stat(c.authFile()); !os.IsNotExist(err) {
		t.Errorf("DET_USER_TOKEN should not write auth.json: %v", err)
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()

	c.ok("", "user", "create", "bob", "--password", "s3cret-pw1")
	c.ok("", "user", "create", "carol", "--admin")
	var users []resolute.User
	if err := json.Unmarshal([]byte(c.ok("", "user", "list", "--json")), &users); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, u := range users {
		got[u.Username] = u.Admin
	}
	if diff := cmp.Diff(map[string]bool{"admin": true, "bob": false, "carol": true, "determined": false}, got); diff != "" {
		t.Errorf("users and admin flags (-want +got):\n%s", diff)
	}
	table := c.ok("", "user", "ls")
	if !strings.HasPrefix(table, "ID  Username    Display Name  Admin  Active\n") || !strings.Contains(table, " bob ") {
		t.Errorf("user ls =\n%s", table)
	}

	// An administrator sets bob's password; bob changes his own.
	c.ok("s3cret-pw2\n", "user", "change-password", "bob")
	c.ok("s3cret-pw2\n", "user", "login", "bob")
	r := c.run("wrong\ns3cret-pw3\n", "user", "change-password")
	if want := (result{stderr: "Error: oldPassword: is not your current password\n", code: 1}); r != want {
		t.Errorf("wrong current password: %+v", r)
	}
	c.ok("s3cret-pw2\ns3cret-pw3\n", "user", "change-password")
	c.ok("s3cret-pw3\n", "user", "login", "bob")
	r = c.run("", "user", "create", "dave")
	if want := (result{stderr: "Error: only administrators may do this\n", code: 1}); r != want {
		t.Errorf("bob creating a user: %+v", r)
	}

	c.ok("", "-u", "admin", "user", "edit", "bob", "--display-name", "Bob B")
	out := c.ok("", "-u", "admin", "user", "deactivate", "bob")
	if !strings.Contains(out, "Active:        no") {
		t.Errorf("deactivate printed:\n%s", out)
	}
	if strings.Contains(c.ok("", "-u", "admin", "user", "list"), "bob") {
		t.Errorf("an inactive user is listed without --all")
	}
	if !strings.Contains(c.ok("", "-u", "admin", "user", "list", "--all"), "Bob B") {
		t.Errorf("an inactive user is missing from list --all")
	}
	r = c.run("s3cret-pw3\n", "user", "login", "bob")
	if r.code != 1 || r.stderr != "Error: invalid username or password\n" {
		t.Errorf("login as an inactive user: %+v", r)
	}
	c.ok("", "-u", "admin", "user", "activate", "bob")
	c.ok("s3cret-pw3\n", "user", "login", "bob")
}

func TestLinkWithAgentUser(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	c.ok("", "user", "create", "ann", "--password", "pw-secret1")

	out := c.ok("", "user", "link-with-agent-user", "ann", "--agent-uid", "1001", "--agent-gid", "1002",
		"--agent-user", "ann", "--agent-group", "ml")
	if !strings.Contains(out, "Agent User:    ann (uid 1001), group ml (gid 1002)\n") {
		t.Errorf("link-with-agent-user printed:\n%s", out)
	}
	var u resolute.User
	var users []resolute.User
	if err := json.Unmarshal([]byte(c.ok("", "user", "list", "--json")), &users); err != nil {
		t.Fatal(err)
	}
	for _, each := range users {
		if each.Username == "ann" {
			u = each
		}
	}
	if diff := cmp.Diff(&resolute.AgentUserGroup{UID: 1001, GID: 1002, User: "ann", Group: "ml"}, u.AgentUserGroup); diff != "" {
		t.Errorf("ann's link (-want +got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"uid 0 is refused": {[]string{"--agent-uid", "0", "--agent-gid", "5000", "--agent-user", "a", "--agent-group", "a"},
			"Error: agentUid: 0 is root's; tasks never run as root\n"},
		"a flag is missing": {[]string{"--agent-uid", "5000", "--agent-gid", "5000", "--agent-user", "a"},
			`required flag(s) "agent-group" not set`},
		"a non-numeric uid": {[]string{"--agent-uid", "ann", "--agent-gid", "5000", "--agent-user", "a", "--agent-group", "a"},
			`invalid argument "ann" for "--agent-uid"`},
	} {
		r := c.run("", append([]string{"user", "link-with-agent-user", "ann"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %+v, want a failure saying %q", name, r, tc.want)
		}
	}

	c.ok("", "user", "create", "bob", "--password", "pw-secret1")
	c.ok("pw-secret1\n", "user", "login", "bob")
	r := c.run("", "user", "link-with-agent-user", "bob", "--agent-uid", "1", "--agent-gid", "1", "--agent-user", "bin", "--agent-group", "bin")
	if want := (result{stderr: "Error: only administrators may do this\n", code: 1}); r != want {
		t.Errorf("bob links himself: %+v", r)
	}

	out = c.ok("", "-u", "admin", "user", "unlink-agent-user", "ann")
	if !strings.Contains(out, "Agent User:    none (tasks run as task_uid_base + user id)\n") {
		t.Errorf("unlink-agent-user printed:\n%s", out)
	}
}
