package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// everyone gives, for each route of allowedToEveryone, a request that
// would succeed; "@who" in it becomes the caller's name, so each caller
// makes its own things. other is another experiment, to compare with v's.
func everyone(v victim, other int64) map[string]attack {
	e, w := itoa(v.exp), itoa(v.workspace)
	config := func(name string) string {
		return "name: " + name + "\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 3}\n"
	}
	out := map[string]attack{
		"POST /login":                           {path: "/login", form: url.Values{"username": {"determined"}, "password": {""}}},
		"POST /logout":                          {path: "/logout", form: url.Values{}},
		"POST /api/v1/auth/login":               {path: "/api/v1/auth/login", body: `{"username":"determined","password":""}`},
		"POST /api/v1/auth/logout":              {path: "/api/v1/auth/logout"},
		"POST /account/password":                {path: "/account/password", form: url.Values{"old_password": {"not-the-one"}, "new_password": {"new-password"}, "confirm": {"new-password"}}},
		"POST /experiments/new":                 {path: "/experiments/new", multipart: map[string]string{"yaml": config("new-@who"), "paused": "on"}},
		"POST /experiments/new/validate":        {path: "/experiments/new/validate", form: url.Values{"yaml": {config("check-@who")}}},
		"POST /api/v1/experiments":              {path: "/api/v1/experiments", body: `{"config":` + quote(config("api-@who")) + `,"activate":false}`},
		"POST /api/v1/preview-hp-search":        {path: "/api/v1/preview-hp-search", body: `{"config":` + quote(config("preview-@who")) + `}`},
		"POST /experiments/{id}/fork":           {path: "/experiments/" + e + "/fork", form: url.Values{"yaml": {config("fork-@who")}}},
		"POST /experiments/{id}/tensorboard":    {path: "/experiments/" + e + "/tensorboard", form: url.Values{}},
		"POST /compare/tensorboard":             {path: "/compare/tensorboard", form: url.Values{"experiments": {e + "," + itoa(other)}}},
		"POST /workspaces":                      {path: "/workspaces", form: url.Values{"name": {"ws-@who"}}},
		"POST /api/v1/workspaces":               {path: "/api/v1/workspaces", body: `{"name":"api-ws-@who"}`},
		"POST /workspaces/{id}/projects":        {path: "/workspaces/" + w + "/projects", form: url.Values{"name": {"project-@who"}}},
		"POST /api/v1/workspaces/{id}/projects": {path: "/api/v1/workspaces/" + w + "/projects", body: `{"name":"api-project-@who"}`},
		"POST /models":                          {path: "/models", form: url.Values{"name": {"model-@who"}}},
		"POST /api/v1/models":                   {path: "/api/v1/models", body: `{"name":"api-model-@who"}`},
		"POST /templates":                       {path: "/templates", form: url.Values{"name": {"template-@who"}, "yaml": {"description: x\n"}}},
		"POST /api/v1/templates":                {path: "/api/v1/templates", body: `{"name":"api-template-@who","yaml":"description: x\n"}`},
		"POST /tasks/launch-notebook":           {path: "/tasks/launch-notebook", form: url.Values{"slots": {"0"}}},
		"POST /tasks/launch-shell":              {path: "/tasks/launch-shell", form: url.Values{}},
		"POST /tasks/run-command":               {path: "/tasks/run-command", form: url.Values{"entrypoint": {"true"}}},
		// Three slots on a two-slot master: they wait in the queue.
		"POST /api/v1/commands":            {path: "/api/v1/commands", body: `{"config":"resources: {slots: 3}\n","entrypoint":["true"]}`},
		"POST /api/v1/notebooks":           {path: "/api/v1/notebooks", body: `{"config":"resources: {slots: 3}\n"}`},
		"POST /api/v1/shells":              {path: "/api/v1/shells", body: `{"config":"resources: {slots: 3}\n"}`},
		"POST /api/v1/tensorboards":        {path: "/api/v1/tensorboards", body: `{"experimentIds":[` + e + `]}`},
		"POST /api/v1/groups/search":       {path: "/api/v1/groups/search", body: `{}`},
		"POST /api/v1/roles/search":        {path: "/api/v1/roles/search", body: `{}`},
		"POST /api/v1/roles/search/by-ids": {path: "/api/v1/roles/search/by-ids", body: `{"roleIds":[1,4]}`},
	}
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		out[method+" /static/*"] = attack{path: "/static/app.css"}
	}
	return out
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// public routes need no session; adminOnly ones are the administrators'
// own, so their owner is refused too; on taskOnly ones the owner is the
// trial's task, with its allocation token, and no person may report for
// it, not even an administrator.
var (
	public    = map[string]bool{"POST /login": true, "POST /api/v1/auth/login": true}
	adminOnly = map[string]bool{"POST /admin/users": true, "POST /admin/users/{id}": true, "POST /admin/users/{id}/password": true,
		"POST /admin/users/{id}/agent-user": true,
		"POST /api/v1/users":                true, "PATCH /api/v1/users/{id}": true,
		// Namespaces and pool bindings are the cluster administrators'.
		"POST /api/v1/workspaces/{id}/namespace-bindings": true, "DELETE /api/v1/workspaces/{id}/namespace-bindings": true,
		"POST /api/v1/resource-pools/{name}/workspace-bindings": true, "PUT /api/v1/resource-pools/{name}/workspace-bindings": true,
		"DELETE /api/v1/resource-pools/{name}/workspace-bindings": true,
		// User groups and roles under basic authorization.
		"POST /api/v1/groups": true, "PUT /api/v1/groups/{groupId}": true, "PATCH /api/v1/groups/{groupId}": true,
		"DELETE /api/v1/groups/{groupId}": true, "POST /api/v1/roles/add-assignments": true,
		"POST /api/v1/roles/remove-assignments": true, "POST /workspaces/{id}/members": true,
		"POST /workspaces/{id}/members/remove": true, "POST /admin/groups": true, "POST /admin/groups/{id}": true,
		"POST /admin/groups/{id}/members": true, "POST /admin/groups/{id}/members/remove": true,
		"POST /admin/groups/{id}/delete": true, "POST /admin/groups/{id}/roles": true, "POST /admin/groups/{id}/roles/remove": true,
		"PUT /api/v1/master/cluster_message": true, "DELETE /api/v1/master/cluster_message": true,
		"POST /api/v1/agents/{id}/disable": true, "POST /api/v1/agents/{id}/enable": true,
		"POST /api/v1/agents/{id}/slots/{slotId}/disable": true, "POST /api/v1/agents/{id}/slots/{slotId}/enable": true,
		"POST /admin/webhooks": true, "POST /admin/webhooks/{id}/delete": true, "POST /admin/webhooks/{id}/test": true,
		"POST /api/v1/webhooks": true, "PATCH /api/v1/webhooks/{id}": true, "DELETE /api/v1/webhooks/{id}": true,
		"POST /api/v1/webhooks/{id}/test": true, "POST /api/v1/cleanup_logs": true}
	taskOnly = map[string]bool{"POST /api/v1/trials/{id}/metrics": true, "POST /api/v1/trials/{id}/progress": true,
		"POST /api/v1/trials/{id}/early_exit": true, "POST /api/v1/trials/{id}/runner/metadata": true,
		"POST /api/v1/checkpoints": true, "POST /api/v1/allocations/{id}/signals/ack_preemption": true,
		"POST /api/v1/allocations/{id}/rendezvous": true}
)

// actor is one column of the attack matrix: who sends the request and how.
type actor struct {
	name string
	// user's session goes with the request (none for the anonymous), fresh
	// for each request so that logging out or a new password ends nothing
	// the next one needs; as the browser's cookie when cookie is set or
	// the route is a page, else as the API's bearer token.
	user   *resolute.User
	cookie bool
	// taskToken is the allocation token of the owner's trial, sent instead
	// of the session on taskOnly routes.
	taskToken string
	// headers the browser adds.
	headers []string
}

// answer is what came back, reduced to what the matrix expects.
const (
	refusedUnsigned = "401"         // the API's: not signed in
	toLogin         = "to login"    // a page's: the login page
	refusedForbid   = "403"         // signed in, but not allowed
	notRefused      = "not refused" // anything else below 500
	failed          = "5xx"
)

// expected is the answer an actor must get from a route.
func expected(route, who string, toEveryone bool) string {
	path := strings.Fields(route)[1]
	switch {
	case who == "task page, same site" || who == "task page, cross site":
		return refusedForbid // the browser says where it comes from
	case who == "anonymous" && (public[route] || strings.HasPrefix(path, "/static/")):
		return notRefused
	case who == "anonymous" && (strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/proxy/")):
		return refusedUnsigned
	case who == "anonymous" || route == "POST /logout":
		return toLogin // signing out ends on the login page too
	case who == "another user" && !toEveryone:
		return refusedForbid
	case who == "owner" && adminOnly[route], who == "administrator" && taskOnly[route]:
		return refusedForbid
	}
	return notRefused
}

// TestTheAttackMatrix sends every mutating route of routes.go as each of:
// nobody, another user (bob), the owner of what it changes (alice), an
// administrator, and a task's page in an administrator's browser (the
// session cookie goes along, the browser names the page's origin: a task
// origin on another port of the master's host, or another site). Nobody is
// sent to sign in, bob is refused what is alice's, alice and the
// administrator are not refused, and a task's page is refused everything.
// The columns that must be refused go first, over alice's things; then
// alice over hers (deletions last); then the administrator over carol's.
// A new route fails this test until it has a request here.
func TestTheAttackMatrix(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := context.Background()
	adminToken := login(t, m, "admin", "")
	alice := newVictim(t, m, adminToken)
	carol := newVictimNamed(t, m, adminToken, "carol", "2c0e5d5e-1c1a-4b7e-9a62-5c1d8e3f0a22")
	if code := api(t, m, "POST", "/api/v1/users", adminToken, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil); code != 200 {
		t.Fatalf("create bob: %d", code)
	}
	user := func(name string) *resolute.User {
		u, err := m.DB.UserByUsername(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return &u.User
	}
	admin, bob := user("admin"), user("bob")
	master, _ := url.Parse(m.URL)
	port, _ := strconv.Atoi(master.Port())
	taskOrigin := fmt.Sprintf("http://%s:%d", master.Hostname(), port+1) // the master's host, another port
	refusing := []actor{
		{name: "task page, same site", user: admin, cookie: true, headers: []string{"Origin", taskOrigin, "Sec-Fetch-Site", "same-site"}},
		{name: "task page, cross site", user: admin, cookie: true, headers: []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}},
		{name: "anonymous"},
		{name: "another user", user: bob},
	}
	owner := actor{name: "owner", user: &alice.alice, taskToken: runningAllocation(t, m, alice.trial)}
	administrator := actor{name: "administrator", user: admin}

	routes := mutatingRoutes(t)
	requests := func(v victim, other int64) map[string]attack {
		list := attacks(v)
		for route, a := range everyone(v, other) {
			if _, ok := list[route]; !ok {
				list[route] = a
			}
		}
		return list
	}
	forAlice, forCarol := requests(alice, carol.exp), requests(carol, alice.exp)
	for _, route := range routes {
		_, bodyOK := forAlice[route]
		_, reason := allowedToEveryone[route]
		_, attacked := attacks(alice)[route]
		switch {
		case !bodyOK:
			t.Errorf("%s is not walked: add bob's request to attacks, or (with a reason) to allowedToEveryone and a request to everyone", route)
		case !attacked && !reason:
			t.Errorf("%s has a request but no reason in allowedToEveryone", route)
		}
	}
	for route := range forAlice {
		if !contains(routes, route) {
			t.Errorf("the matrix names %s, which routes.go no longer has", route)
		}
	}
	for route := range allowedToEveryone {
		if !contains(routes, route) {
			t.Errorf("allowedToEveryone names %s, which routes.go no longer has", route)
		}
	}

	counts := map[string]map[string]int{} // actor → answer → requests
	done := map[string]int{}              // actor → requests answered 2xx or 3xx
	unexpected := 0
	run := func(a actor, v victim, list map[string]attack, order []string) {
		counts[a.name] = map[string]int{}
		for _, route := range order {
			req, ok := list[route]
			if !ok {
				continue
			}
			_, attacked := attacks(v)[route]
			want := expected(route, a.name, !attacked)
			got, detail := send(t, m, route, req, a)
			counts[a.name][got]++
			if got == notRefused && (strings.HasPrefix(detail, "2") || strings.HasPrefix(detail, "3")) {
				done[a.name]++
			}
			if got != want {
				unexpected++
				t.Errorf("%s as %s: %s, want %s\n%.300s", route, a.name, got, want, detail)
			}
		}
	}
	for _, a := range refusing {
		run(a, alice, forAlice, routes)
	}
	// Nothing the refused sent changed alice's things.
	var ws resolute.WorkspaceResponse
	api(t, m, "GET", "/api/v1/workspaces/"+itoa(alice.workspace), alice.aliceToken, "", &ws)
	var e resolute.ExperimentResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(alice.exp), alice.aliceToken, "", &e)
	c, err := m.DB.Checkpoint(ctx, alice.checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := m.DB.UserByUsername(ctx, "alice"); a.Admin || ws.Workspace.Name != "alices" || ws.Workspace.Archived ||
		e.Experiment.State != resolute.StateActive || e.Experiment.Name != "alices" || e.Experiment.Priority != nil || c.State != "COMPLETED" {
		t.Errorf("after the refused requests: alice admin %v, workspace %+v, experiment %s %q priority %v, checkpoint %s",
			a.Admin, ws.Workspace, e.Experiment.State, e.Experiment.Name, e.Experiment.Priority, c.State)
	}
	destructiveLast := append([]string(nil), routes...)
	sort.SliceStable(destructiveLast, func(i, j int) bool { return destroys(destructiveLast[i]) < destroys(destructiveLast[j]) })
	run(owner, alice, forAlice, destructiveLast)
	run(administrator, carol, forCarol, destructiveLast)

	// The figures.
	columns := append(refusing, owner, administrator)
	t.Logf("attack matrix: %d mutating routes × %d callers = %d requests, %d unexpected answers", len(routes), len(columns),
		len(routes)*len(columns), unexpected)
	for _, a := range columns {
		var parts []string
		for _, answer := range []string{refusedUnsigned, toLogin, refusedForbid, notRefused, failed} {
			n := counts[a.name][answer]
			switch {
			case n > 0 && answer == notRefused:
				parts = append(parts, fmt.Sprintf("%s %d (%d done, the rest 404 or 409 after earlier changes, 400 or 422 by the rules)", answer, n, done[a.name]))
			case n > 0:
				parts = append(parts, fmt.Sprintf("%s %d", answer, n))
			}
		}
		t.Logf("  %-22s %s", a.name, strings.Join(parts, ", "))
	}
	if unexpected != 0 {
		t.Errorf("%d unexpected answers, want 0", unexpected)
	}
}

// destroys ranks routes for the owner's and the administrator's turns:
// 0 changes what it names, 1 ends it (kill), 2 and more delete it, what
// is deeper in the path first (an alias before its model).
func destroys(route string) int {
	switch {
	case strings.HasSuffix(route, "/kill"):
		return 1
	case strings.HasPrefix(route, "DELETE ") || strings.HasSuffix(route, "/delete"):
		return 20 - strings.Count(strings.TrimSuffix(route, "/delete"), "/")
	}
	return 0
}

// send makes one request of the matrix and says how it was answered.
func send(t *testing.T, m *handlerstest.Master, route string, a attack, who actor) (string, string) {
	t.Helper()
	method := strings.Fields(route)[0]
	name := strings.ReplaceAll(who.name, " ", "-")
	fill := func(s string) string { return strings.ReplaceAll(s, "@who", strings.ReplaceAll(name, ",", "")) }
	var body io.Reader
	contentType := "application/json"
	switch {
	case a.multipart != nil:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range a.multipart {
			mw.WriteField(k, fill(v))
		}
		mw.Close()
		body, contentType = &buf, mw.FormDataContentType()
	case a.form != nil:
		f := url.Values{}
		for k, vs := range a.form {
			for _, v := range vs {
				f.Add(k, fill(v))
			}
		}
		body, contentType = strings.NewReader(f.Encode()), "application/x-www-form-urlencoded"
	default:
		body = strings.NewReader(fill(a.body))
	}
	req, err := http.NewRequest(method, m.URL+a.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if who.taskToken != "" && taskOnly[route] {
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+who.taskToken)
	} else if who.user != nil {
		token := freshSession(t, m, who.user.ID)
		if who.cookie || a.form != nil || a.multipart != nil {
			req.AddCookie(&http.Cookie{Name: "auth", Value: token})
		} else {
			req.Header.Set("Authorization", "Bearer "+token)
		}
	}
	for i := 0; i+1 < len(who.headers); i += 2 {
		req.Header.Set(who.headers[i], who.headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	detail := fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Location"), b)
	switch {
	case resp.StatusCode == http.StatusInternalServerError:
		return failed, detail // the proxy's 503 (a task starting) is an answer
	case resp.StatusCode == http.StatusUnauthorized:
		return refusedUnsigned, detail
	case resp.StatusCode == http.StatusForbidden:
		return refusedForbid, detail
	case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/login"):
		return toLogin, detail
	}
	return notRefused, detail
}

// runningAllocation records allocation trial-{id}.1 of a trial, the one
// the queue made for it and the attacks name, as running, and returns its
// token; no process runs (the trial needs more slots than the master has).
func runningAllocation(t *testing.T, m *handlerstest.Master, trialID int64) string {
	t.Helper()
	ctx := context.Background()
	token, hash := auth.NewToken()
	id := fmt.Sprintf("trial-%d.1", trialID)
	err := m.DB.CreateAllocation(ctx, id, resolute.TrialTaskID(trialID), &trialID, 0)
	if err != nil && resolute.ErrorCode(err) != resolute.EConflict {
		t.Fatal(err)
	}
	if _, err := m.DB.StartAllocation(ctx, id, nil, hash); err != nil {
		t.Fatal(err)
	}
	return token
}

// freshSession opens a session for a user straight in the database (no
// password check, so no bcrypt per request) and returns its token.
func freshSession(t *testing.T, m *handlerstest.Master, userID int64) string {
	t.Helper()
	token, hash := auth.NewToken()
	if err := m.DB.CreateSession(context.Background(), userID, hash, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return token
}
