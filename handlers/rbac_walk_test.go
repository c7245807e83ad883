package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// rbacWalk is a master under RBAC where alice (a ClusterAdmin, so that she
// makes everything newVictim makes) owns one of each thing in her
// workspace and in the default one, and two attackers hold no role there:
// a Viewer of another workspace (team-a, with an experiment of its own)
// and a user with no role at all.
type rbacWalk struct {
	m                *handlerstest.Master
	admin            string
	alice            victim
	viewer, nobody   *resolute.User
	viewerToken      string
	teamA, teamAExp  int64
	editorToken      string
	teamAProject     int64
	attackers        []actor
	attackerSessions map[string]string
}

func newRBACWalk(t *testing.T) *rbacWalk {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{RBAC: true})
	w := &rbacWalk{m: m, admin: login(t, m, "admin", "")}
	must := func(code int, what string) {
		t.Helper()
		if code != 200 {
			t.Fatalf("%s: status %d", what, code)
		}
	}
	ids := map[string]int64{}
	for _, name := range []string{"alice", "vic", "nora", "ed"} {
		var u resolute.UserResponse
		must(api(t, m, "POST", "/api/v1/users", w.admin, `{"user":{"username":"`+name+`"},"password":"s3cret-pw"}`, &u), "create "+name)
		ids[name] = u.User.ID
	}
	must(api(t, m, "POST", "/api/v1/roles/add-assignments", w.admin, fmt.Sprintf(
		`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":"ClusterAdmin"}}}]}`, ids["alice"]), nil), "alice's role")
	w.alice = newVictim(t, m, w.admin)
	var ws resolute.WorkspaceResponse
	must(api(t, m, "POST", "/api/v1/workspaces", w.admin, `{"name":"team-a"}`, &ws), "team-a")
	var p resolute.ProjectResponse
	must(api(t, m, "POST", fmt.Sprintf("/api/v1/workspaces/%d/projects", ws.Workspace.ID), w.admin, `{"name":"p"}`, &p), "team-a's project")
	w.teamA, w.teamAProject = ws.Workspace.ID, p.Project.ID
	cfg, _ := json.Marshal(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{ProjectID: p.Project.ID,
		Config: "name: team-a\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 3}\n"}})
	var e resolute.ExperimentResponse
	must(api(t, m, "POST", "/api/v1/experiments", w.admin, string(cfg), &e), "team-a's experiment")
	w.teamAExp = e.Experiment.ID
	must(api(t, m, "POST", "/api/v1/roles/add-assignments", w.admin, fmt.Sprintf(`{"userRoleAssignments":[
		{"userId":%d,"roleAssignment":{"role":{"name":"Viewer"},"scopeWorkspaceId":%d}},
		{"userId":%d,"roleAssignment":{"role":{"name":"Editor"},"scopeWorkspaceId":%d}}]}`, ids["vic"], w.teamA, ids["ed"], w.teamA), nil), "team-a's roles")
	user := func(name string) *resolute.User {
		u, err := m.DB.UserByUsername(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return &u.User
	}
	w.viewer, w.nobody = user("vic"), user("nora")
	w.viewerToken, w.editorToken = login(t, m, "vic", "s3cret-pw"), login(t, m, "ed", "s3cret-pw")
	w.attackers = []actor{{name: "viewer of another workspace", user: w.viewer}, {name: "user with no role", user: w.nobody}}
	return w
}

// harmlessUnderRBAC are the mutating routes an attacker may call with
// success under RBAC too: they touch only the caller's own session and
// password, serve files, or only read what is not a workspace's.
var harmlessUnderRBAC = map[string]bool{
	"POST /static/*": true, "PUT /static/*": true, "PATCH /static/*": true, "DELETE /static/*": true,
	"POST /login": true, "POST /logout": true, "POST /api/v1/auth/login": true, "POST /api/v1/auth/logout": true,
	"POST /account/password": true, "POST /experiments/new/validate": true, "POST /api/v1/preview-hp-search": true,
	"POST /api/v1/groups/search": true, "POST /api/v1/roles/search": true, "POST /api/v1/roles/search/by-ids": true,
}

// refusedWithNotice are the page forms that answer a thing the caller
// may not see as one that is gone: back to the list with an error notice
// (the snapshot shows nothing changed).
var refusedWithNotice = map[string]string{
	"POST /jobs/update":     "a job of a workspace one does not read is not in one's queue",
	"POST /tasks/{id}/kill": "a task of a workspace one does not read is not found, as one that ended",
}

// snapshot is what the admin reads of alice's things and of the lists,
// to compare before and after the attacks: nothing may have changed.
func (w *rbacWalk) snapshot(t *testing.T) string {
	t.Helper()
	v := w.alice
	var b strings.Builder
	for _, path := range []string{
		"/api/v1/workspaces/" + itoa(v.workspace), "/api/v1/projects/" + itoa(v.project), "/api/v1/experiments/" + itoa(v.exp),
		"/api/v1/experiments/" + itoa(v.exp) + "/trials", "/api/v1/models/" + v.model, "/api/v1/models/" + v.model + "/versions",
		"/api/v1/templates/" + v.template, "/api/v1/checkpoints/" + v.checkpoint, "/api/v1/groups/" + itoa(v.group),
		"/api/v1/roles/workspace/" + itoa(v.workspace), "/api/v1/tasks/" + v.tasks["notebooks"], "/api/v1/tasks/" + v.tasks["shells"],
		"/api/v1/tasks/" + v.tasks["tensorboards"], "/api/v1/users", "/api/v1/workspaces", "/api/v1/projects", "/api/v1/models",
		"/api/v1/templates", "/api/v1/master/cluster_message", "/api/v1/resource-pools/default/workspace-bindings",
	} {
		var out any
		code := api(t, w.m, "GET", path, w.admin, "", &out)
		body, _ := json.Marshal(out)
		fmt.Fprintf(&b, "%s %d %s\n", path, code, body)
	}
	var exps struct {
		Experiments []resolute.Experiment `json:"experiments"`
	}
	api(t, w.m, "GET", "/api/v1/experiments?limit=1000", w.admin, "", &exps)
	var tasks struct {
		Tasks []resolute.Task `json:"tasks"`
	}
	api(t, w.m, "GET", "/api/v1/tasks", w.admin, "", &tasks)
	fmt.Fprintf(&b, "%d experiments, %d tasks\n", len(exps.Experiments), len(tasks.Tasks))
	return b.String()
}

// TestUnderRBACNoRouteReachesAnotherWorkspacesThings walks every mutating
// route of routes.go, with the requests of the attack matrix naming
// alice's things, as a Viewer of another workspace and as a user who
// holds no role: each is refused (403, or 404 for what they may not even
// see), but for the few that touch only the caller's own session or read
// nothing of a workspace; and afterwards nothing of alice's, nor any list,
// changed.
func TestUnderRBACNoRouteReachesAnotherWorkspacesThings(t *testing.T) {
	w := newRBACWalk(t)
	v := w.alice
	before := w.snapshot(t)
	list := attacks(v)
	for route, a := range everyone(v, w.teamAExp) {
		if _, ok := list[route]; !ok {
			list[route] = a
		}
	}
	routes := mutatingRoutes(t)
	refused := 0
	for _, a := range w.attackers {
		for _, route := range routes {
			req, ok := list[route]
			if !ok {
				t.Errorf("%s is not walked: the attack matrix has no request for it", route)
				continue
			}
			got, detail := send(t, w.m, route, req, a)
			status := strings.Fields(detail)[0]
			switch {
			case got == failed:
				t.Errorf("%s as %s: %s", route, a.name, detail)
			case harmlessUnderRBAC[route]:
			case refusedWithNotice[route] != "" && status == "303" && (strings.HasPrefix(detail, "303 /jobs ") || strings.HasPrefix(detail, "303 /tasks ")):
			case status == "403" || status == "404":
				refused++
			default:
				t.Errorf("%s as %s: %.300s, want 403 or 404", route, a.name, detail)
			}
		}
	}
	if after := w.snapshot(t); after != before {
		t.Errorf("the refused requests changed something:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("under rbac: %d mutating routes × %d attackers, %d refused", len(routes), len(w.attackers), refused)
}

// getRoutes lists the GET routes of the router, "/api/v1/..." and pages.
func getRoutes(t *testing.T) []string {
	t.Helper()
	r := handlers.New(handlers.Config{}, handlers.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Routes()
	var out []string
	err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet {
			out = append(out, strings.TrimSuffix(route, "/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// readPath fills a GET route's parameters with alice's things; "" for a
// route that names nothing of a workspace (users, groups, pools, the
// master's own pages), which the marker check covers instead.
func readPath(route string, v victim) string {
	kindOf := regexp.MustCompile(`^/api/v1/(commands|notebooks|shells|tensorboards)/\{id\}`)
	if m := kindOf.FindStringSubmatch(route); m != nil {
		return strings.Replace(route, "{id}", v.tasks[m[1]], 1)
	}
	fill := []struct{ prefix, param, value string }{
		{"/experiments/{id}", "{id}", itoa(v.exp)}, {"/api/v1/experiments/{id}", "{id}", itoa(v.exp)},
		{"/trials/{id}", "{id}", itoa(v.trial)}, {"/api/v1/trials/{id}", "{id}", itoa(v.trial)},
		{"/api/v1/runs/{id}", "{id}", itoa(v.trial)},
		{"/tasks/{id}/terminal", "{id}", v.tasks["shells"]}, {"/api/v1/tasks/{id}/tunnel", "{id}", v.tasks["shells"]},
		{"/api/v1/shells/{id}", "{id}", v.tasks["shells"]},
		{"/tasks/{id}", "{id}", v.task}, {"/api/v1/tasks/{id}", "{id}", v.task},
		{"/workspaces/{id}", "{id}", itoa(v.workspace)}, {"/api/v1/workspaces/{id}", "{id}", itoa(v.workspace)},
		{"/api/v1/roles/workspace/{workspaceId}", "{workspaceId}", itoa(v.workspace)},
		{"/projects/{id}", "{id}", itoa(v.project)}, {"/api/v1/projects/{id}", "{id}", itoa(v.project)},
		{"/models/{name}", "{name}", v.model}, {"/api/v1/models/{name}", "{name}", v.model},
		{"/templates/{name}", "{name}", v.template}, {"/api/v1/templates/{name}", "{name}", v.template},
		{"/api/v1/checkpoints/{uuid}", "{uuid}", v.checkpoint},
		{"/api/v1/allocations/{id}", "{id}", resolute.TrialTaskID(v.trial) + ".1"},
	}
	for _, f := range fill {
		if strings.HasPrefix(route, f.prefix) {
			return strings.ReplaceAll(strings.Replace(route, f.param, f.value, 1), "{num}", "1")
		}
	}
	return ""
}

// TestUnderRBACNoPageOrReadTellsOfAnotherWorkspace walks every GET route:
// one that names alice's things answers the two attackers 403 or 404;
// every other (lists, the dashboard, the cluster page, the job queue, the
// agents, the pools) answers them without her workspace's name, "alices",
// in what it shows, which the administrator's answers do carry.
func TestUnderRBACNoPageOrReadTellsOfAnotherWorkspace(t *testing.T) {
	w := newRBACWalk(t)
	v := w.alice
	streams := map[string]bool{"/events": true, "/jobs/events": true, "/tasks/{id}/terminal/ws": true}
	adminSaw := 0
	for _, route := range getRoutes(t) {
		if streams[route] || strings.Contains(route, "*") {
			continue
		}
		path := readPath(route, v)
		named := path != ""
		if !named {
			if strings.Contains(route, "{") {
				continue // users, groups, pools by name: no workspace's
			}
			path = route
		}
		for _, a := range w.attackers {
			code, body := getAs(t, w.m, path, freshSession(t, w.m, a.user.ID))
			switch {
			case code >= 500:
				t.Errorf("GET %s as %s: %d %.300s", path, a.name, code, body)
			case named && code != 403 && code != 404:
				t.Errorf("GET %s as %s: %d %.300s, want 403 or 404", path, a.name, code, body)
			case !named && strings.Contains(body, "alices"):
				i := strings.Index(body, "alices")
				t.Errorf("GET %s as %s tells of alice's workspace: …%s…", path, a.name, body[max(0, i-150):min(len(body), i+100)])
			}
		}
		if !named {
			if _, body := getAs(t, w.m, path, w.admin); strings.Contains(body, "alices") {
				adminSaw++
			}
		}
	}
	if adminSaw < 5 {
		t.Errorf("the administrator saw alice's workspace on %d lists; the check proves nothing", adminSaw)
	}
}

// getAs sends GET path with a session (as a browser's cookie and an API
// token both) and returns the status and body.
func getAs(t *testing.T, m *handlerstest.Master, path, token string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", m.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.AddCookie(&http.Cookie{Name: "auth", Value: token})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
