package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// api calls the JSON API with an optional token and decodes the answer.
func api(t testing.TB, m *handlerstest.Master, method, path, token, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, m.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

func login(t testing.TB, m *handlerstest.Master, user, password string) string {
	t.Helper()
	var out resolute.LoginResponse
	body, _ := json.Marshal(resolute.LoginRequest{Username: user, Password: password})
	if code := api(t, m, "POST", "/api/v1/auth/login", "", string(body), &out); code != 200 {
		t.Fatalf("login %s: status %d", user, code)
	}
	return out.Token
}

func TestLoginLogoutAndTokens(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{InitialPassword: "s3cret-pw"})
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"admin","password":"nope"}`, &e); code != 401 || e.Error.Message != "invalid username or password" {
		t.Fatalf("wrong password: %d %+v", code, e)
	}
	if code := api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"ghost","password":"s3cret-pw"}`, &e); code != 401 || e.Error.Message != "invalid username or password" {
		t.Fatalf("unknown user: %d %+v", code, e)
	}
	token := login(t, m, "admin", "s3cret-pw")
	var me resolute.UserResponse
	if code := api(t, m, "GET", "/api/v1/me", token, "", &me); code != 200 || me.User.Username != "admin" || !me.User.Admin {
		t.Fatalf("me: %d %+v", code, me)
	}
	if code := api(t, m, "POST", "/api/v1/auth/logout", token, "", nil); code != 200 {
		t.Fatalf("logout: %d", code)
	}
	if code := api(t, m, "GET", "/api/v1/me", token, "", &e); code != 401 || e.Error.Code != "unauthorized" {
		t.Fatalf("token after logout: %d %+v", code, e)
	}
}

func TestRepeatedFailedLoginsAreSlowedDown(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{InitialPassword: "s3cret-pw"})
	var e resolute.ErrorResponse
	for i := 0; i < 6; i++ {
		api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"admin","password":"guess"}`, &e)
	}
	code := api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"admin","password":"s3cret-pw"}`, &e)
	if code != 429 || !strings.HasPrefix(e.Error.Message, "too many failed logins; try again in") {
		t.Fatalf("after 6 failures even the right password waits: got %d %+v", code, e)
	}
}

func TestBadInputIsNamed(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{MaxBodyBytes: 2048})
	token := login(t, m, "admin", "")
	tests := map[string]struct {
		method, path, body string
		status             int
		message            string
	}{
		"malformed JSON says where":                 {"POST", "/api/v1/workspaces", `{"name": `, 400, "malformed JSON: unexpected end of body"},
		"a wrong type names the field":              {"POST", "/api/v1/workspaces", `{"name": 7}`, 400, "name: expected string, got number"},
		"an empty name is refused":                  {"POST", "/api/v1/workspaces", `{"name": ""}`, 400, "name: must not be empty"},
		"a duplicate is a conflict":                 {"POST", "/api/v1/workspaces", `{"name": "Uncategorized"}`, 409, `workspace "Uncategorized" already exists`},
		"a bad id is named":                         {"GET", "/api/v1/workspaces/abc", "", 400, `id: expected a positive integer, got "abc"`},
		"a missing object is 404":                   {"GET", "/api/v1/projects/999", "", 404, "project 999 not found"},
		"an unknown route is a JSON 404":            {"GET", "/api/v1/nothing-here", "", 404, "no page at /api/v1/nothing-here"},
		"a body over max_request_body_bytes is 413": {"POST", "/api/v1/workspaces", `{"name":"` + strings.Repeat("x", 4096) + `"}`, 413, "request body is larger than 2048 bytes"},
		"a bad filter is named":                     {"GET", "/api/v1/workspaces?archived=maybe", "", 400, `archived: expected true or false, got "maybe"`},
		"the default workspace stays":               {"DELETE", "/api/v1/workspaces/1", "", 409, `the default workspace "Uncategorized" cannot be deleted`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var e resolute.ErrorResponse
			code := api(t, m, tc.method, tc.path, token, tc.body, &e)
			if code != tc.status || e.Error.Message != tc.message {
				t.Fatalf("got %d %q, want %d %q", code, e.Error.Message, tc.status, tc.message)
			}
		})
	}
}

func TestWorkspacesAndProjectsThroughTheAPI(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	var ws resolute.WorkspaceResponse
	if code := api(t, m, "POST", "/api/v1/workspaces", token, `{"name":"nlp"}`, &ws); code != 200 || ws.Workspace.Name != "nlp" {
		t.Fatalf("create workspace: %d %+v", code, ws)
	}
	id := itoa(ws.Workspace.ID)
	var p resolute.ProjectResponse
	if code := api(t, m, "POST", "/api/v1/workspaces/"+id+"/projects", token, `{"name":"bert","description":"fine-tuning"}`, &p); code != 200 || p.Project.WorkspaceName != "nlp" {
		t.Fatalf("create project: %d %+v", code, p)
	}
	var list resolute.ProjectsResponse
	api(t, m, "GET", "/api/v1/projects", token, "", &list)
	if len(list.Projects) != 2 || list.Projects[1].Name != "bert" {
		t.Fatalf("projects = %+v", list.Projects)
	}
	if code := api(t, m, "PATCH", "/api/v1/projects/"+itoa(p.Project.ID), token, `{"description":"distillation"}`, &p); code != 200 || p.Project.Description != "distillation" || p.Project.Name != "bert" {
		t.Fatalf("patch project: %d %+v", code, p)
	}
	var e resolute.ErrorResponse
	if code := api(t, m, "DELETE", "/api/v1/workspaces/"+id, token, "", &e); code != 409 {
		t.Fatalf("delete non-empty workspace: %d %+v", code, e)
	}
	api(t, m, "POST", "/api/v1/projects/"+itoa(p.Project.ID)+"/archive", token, "", nil)
	archived := resolute.ProjectsResponse{}
	api(t, m, "GET", "/api/v1/workspaces/"+id+"/projects?archived=true", token, "", &archived)
	if len(archived.Projects) != 1 || !archived.Projects[0].Archived {
		t.Fatalf("archived projects = %+v", archived.Projects)
	}
	if code := api(t, m, "DELETE", "/api/v1/projects/"+itoa(p.Project.ID), token, "", nil); code != 200 {
		t.Fatalf("delete project: %d", code)
	}
	if code := api(t, m, "DELETE", "/api/v1/workspaces/"+id, token, "", nil); code != 200 {
		t.Fatalf("delete empty workspace: %d", code)
	}
}

func TestUsersAdministration(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	var u resolute.UserResponse
	if code := api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ada"},"password":"lovelace"}`, &u); code != 200 || u.User.Admin {
		t.Fatalf("create user: %d %+v", code, u)
	}
	ada := login(t, m, "ada", "lovelace")
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/users", ada, `{"user":{"username":"eve"}}`, &e); code != 403 {
		t.Fatalf("non-admin creating a user: %d", code)
	}
	id := itoa(u.User.ID)
	if code := api(t, m, "POST", "/api/v1/users/"+id+"/password", ada, `{"password":"brand-new-pw","oldPassword":"wrong"}`, &e); code != 400 || e.Error.Message != "oldPassword: is not your current password" {
		t.Fatalf("change own password with a wrong old one: %d %+v", code, e)
	}
	if code := api(t, m, "POST", "/api/v1/users/"+id+"/password", ada, `{"password":"analytical","oldPassword":"lovelace"}`, nil); code != 200 {
		t.Fatalf("change own password: %d", code)
	}
	login(t, m, "ada", "analytical")
	if code := api(t, m, "POST", "/api/v1/users/1/password", ada, `"x"`, &e); code != 403 {
		t.Fatalf("non-admin setting admin's password: %d", code)
	}
	if code := api(t, m, "PATCH", "/api/v1/users/"+id, admin, `{"active":false}`, &u); code != 200 || u.User.Active {
		t.Fatalf("deactivate: %d %+v", code, u)
	}
	if code := api(t, m, "GET", "/api/v1/me", ada, "", nil); code != 401 {
		t.Fatalf("a deactivated user's session still works: %d", code)
	}
	if code := api(t, m, "POST", "/api/v1/auth/login", "", `{"username":"ada","password":"analytical"}`, &e); code != 401 {
		t.Fatalf("a deactivated user logs in: %d", code)
	}
}

// browser is a cookie-keeping client that does not follow redirects.
func browserClient(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func post(t *testing.T, c *http.Client, m *handlerstest.Master, path string, form url.Values, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func get(t *testing.T, c *http.Client, m *handlerstest.Master, path string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(m.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestPagesNeedASessionAndFormsWork(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := browserClient(t)
	for _, path := range []string{"/dashboard", "/workspaces", "/admin/users", "/logs", "/projects/1", "/experiments"} {
		resp, _ := get(t, c, m, path)
		if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/login?redirect=") {
			t.Errorf("GET %s without a session: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, _ := post(t, c, m, "/login", url.Values{"username": {"admin"}, "password": {""}, "redirect": {"/workspaces"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/workspaces" {
		t.Fatalf("login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := resp.Cookies()[0]
	if cookie.Name != "auth" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie %+v", cookie)
	}
	_, body := get(t, c, m, "/workspaces")
	for _, id := range []string{`id="workspaces"`, `id="new-workspace"`, `id="no-password-banner"`, `aria-current="page"`} {
		if !strings.Contains(body, id) {
			t.Errorf("workspaces page lacks %s", id)
		}
	}
	resp, body = post(t, c, m, "/workspaces", url.Values{"name": {""}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-name"`) || !strings.Contains(body, "must not be empty") {
		t.Fatalf("invalid form: %d", resp.StatusCode)
	}
	resp, _ = post(t, c, m, "/workspaces", url.Values{"name": {"speech"}})
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/workspaces/") {
		t.Fatalf("create workspace form: %d", resp.StatusCode)
	}
	_, body = get(t, c, m, resp.Header.Get("Location"))
	if !strings.Contains(body, "Created workspace speech.") {
		t.Fatal("no flash after creating a workspace")
	}
	resp, _ = post(t, c, m, "/workspaces", url.Values{"name": {"evil"}}, "Sec-Fetch-Site", "cross-site")
	if resp.StatusCode != 403 {
		t.Fatalf("a cross-site form post: %d, want 403", resp.StatusCode)
	}
	resp, body = get(t, c, m, "/no/such/page")
	if resp.StatusCode != 404 || !strings.Contains(body, `id="error-page"`) {
		t.Fatalf("unknown page: %d", resp.StatusCode)
	}
	resp, _ = post(t, c, m, "/logout", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	resp, _ = get(t, c, m, "/dashboard")
	if resp.StatusCode != 303 {
		t.Fatalf("dashboard after logout: %d", resp.StatusCode)
	}
}

func TestAdminPagesAreForAdmins(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	c := browserClient(t)
	post(t, c, m, "/login", url.Values{"username": {"bob"}, "password": {"s3cret-pw"}})
	for _, path := range []string{"/admin/users", "/logs"} {
		resp, _ := get(t, c, m, path)
		if resp.StatusCode != 403 {
			t.Errorf("GET %s as a user: %d, want 403", path, resp.StatusCode)
		}
	}
	if code := api(t, m, "GET", "/api/v1/master/logs", login(t, m, "bob", "s3cret-pw"), "", nil); code != 403 {
		t.Errorf("master logs as a user: %d", code)
	}
}

func TestHealthAndInfoNeedNoSession(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var health map[string]string
	if code := api(t, m, "GET", "/health", "", "", &health); code != 200 || health["status"] != "ok" {
		t.Fatalf("health: %d %v", code, health)
	}
	var info resolute.MasterInfo
	if code := api(t, m, "GET", "/info", "", "", &info); code != 200 || info.ClusterID == "" || info.ResourceManager != "local" {
		t.Fatalf("info: %d %+v", code, info)
	}
}

func TestHealthSaysTheEmbeddedDatabaseIsDownWhileItIs(t *testing.T) {
	down := "the embedded database is down for 2s: it exited (signal: killed); restarting it"
	m := handlerstest.Start(t, handlerstest.Options{DatabaseDown: func() string { return down }})
	var health map[string]string
	if code := api(t, m, "GET", "/health", "", "", &health); code != 503 || health["status"] != "unavailable" ||
		health["database"] != "down" || health["detail"] != down {
		t.Fatalf("health: %d %v", code, health)
	}
}

func TestMasterLogsStream(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	req, _ := http.NewRequest("GET", m.URL+"/api/v1/master/logs?limit=5", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var n int
	for dec.More() {
		var line struct{ Result resolute.LogEntry }
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		if line.Result.Message == "" || line.Result.ID == 0 {
			t.Fatalf("line %+v", line)
		}
		n++
	}
	if n == 0 || n > 5 {
		t.Fatalf("got %d lines (want 1..5)", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
