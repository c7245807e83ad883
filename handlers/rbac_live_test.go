package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// TestUnderRBACTheEventsStreamTellsNothingOfAnotherWorkspace: a Viewer of
// team-a subscribed to alice's experiment's topic and to team-a's hears
// team-a's change and not alice's, made just before it; the administrator,
// subscribed the same, hears alice's.
func TestUnderRBACTheEventsStreamTellsNothingOfAnotherWorkspace(t *testing.T) {
	w := newRBACWalk(t)
	theirs, ours := fmt.Sprintf("experiment:%d", w.alice.exp), fmt.Sprintf("experiment:%d", w.teamAExp)
	query := "topics=" + theirs + "," + ours
	viewer := eventTopicsOf(t, signInPages(t, w.m, "vic", "s3cret-pw"), w.m, query)
	admin := eventTopicsOf(t, signInPages(t, w.m, "admin", ""), w.m, query)
	// A stream subscribes before its headers come back: both listen now.
	if code := api(t, w.m, "PATCH", "/api/v1/experiments/"+itoa(w.alice.exp), w.admin, `{"description":"changed"}`, nil); code != 200 {
		t.Fatalf("change alice's experiment: %d", code)
	}
	waitTopic(t, admin, theirs, "the administrator")
	if code := api(t, w.m, "PATCH", "/api/v1/experiments/"+itoa(w.teamAExp), w.admin, `{"description":"changed"}`, nil); code != 200 {
		t.Fatalf("change team-a's experiment: %d", code)
	}
	// What the viewer would be told of alice's change comes before, or
	// with, what she is told of team-a's.
	for topic := range viewer {
		if topic == theirs {
			t.Fatalf("the viewer of team-a was told %s, alice's experiment changed", theirs)
		}
		if topic == ours {
			break
		}
	}
	// A reconnecting page is told its topics changed: only those it reads.
	resynced := eventTopicsOf(t, signInPages(t, w.m, "vic", "s3cret-pw"), w.m, query+"&resync=1")
	if got := <-resynced; got != ours {
		t.Errorf("the viewer's resync told %s first, want only %s", got, ours)
	}
}

func waitTopic(t *testing.T, topics <-chan string, want, who string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case got := <-topics:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("%s was not told %s within a minute", who, want)
		}
	}
}

// TestUnderRBACTheClusterShowsOthersSlotsOnlyAsHeld: alice's command holds
// a slot; the administrator sees which allocation holds it, on
// /api/v1/agents, /api/v1/resource-pools and the cluster page; a Viewer
// of another workspace and a user with no role see the slot held (hidden)
// and nothing of the command, nor its job in the queue.
func TestUnderRBACTheClusterShowsOthersSlotsOnlyAsHeld(t *testing.T) {
	w := newRBACWalk(t)
	aliceToken := login(t, w.m, "alice", "s3cret-pw")
	var task resolute.TaskResponse
	if code := api(t, w.m, "POST", "/api/v1/commands", aliceToken, `{"config":"resources: {slots: 1}\n","entrypoint":["sleep","300"]}`, &task); code != 200 {
		t.Fatalf("alice's command: %d", code)
	}
	t.Cleanup(func() { api(t, w.m, "POST", "/api/v1/commands/"+task.Task.ID+"/kill", w.admin, "", nil) })
	id := task.Task.ID
	held := func(agents resolute.AgentsResponse) (mine, hidden int) {
		for _, a := range agents.Agents {
			for _, sl := range a.Slots {
				if strings.HasPrefix(sl.AllocationID, id+".") {
					mine++
				}
				if sl.Hidden {
					hidden++
				}
			}
		}
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var agents resolute.AgentsResponse
		api(t, w.m, "GET", "/api/v1/agents", w.admin, "", &agents)
		if mine, hidden := held(agents); mine == 1 && hidden == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's command holds no slot after two minutes: %+v", agents)
		}
		time.Sleep(100 * time.Millisecond) // polling the master's own state, no event to wait on
	}
	for _, path := range []string{"/api/v1/resource-pools", "/cluster/pools", "/api/v1/job-queues", "/jobs/table"} {
		if _, body := getAs(t, w.m, path, w.admin); !strings.Contains(body, id) {
			t.Errorf("GET %s as the administrator does not name %s", path, id)
		}
	}
	for _, a := range w.attackers {
		token := freshSession(t, w.m, a.user.ID)
		_, body := getAs(t, w.m, "/api/v1/agents", token)
		var agents resolute.AgentsResponse
		if err := json.Unmarshal([]byte(body), &agents); err != nil {
			t.Fatal(err)
		}
		if mine, hidden := held(agents); mine != 0 || hidden != 1 || strings.Contains(body, id) {
			t.Errorf("/api/v1/agents as %s: %d slots named alice's, %d hidden, want 0 and 1: %s", a.name, mine, hidden, body)
		}
		for _, path := range []string{"/api/v1/resource-pools", "/cluster/pools", "/cluster", "/api/v1/job-queues", "/jobs/table", "/jobs"} {
			if code, body := getAs(t, w.m, path, token); code != 200 || strings.Contains(body, id) {
				t.Errorf("GET %s as %s: %d, names %s: %v", path, a.name, code, id, strings.Contains(body, id))
			}
		}
		if _, body := getAs(t, w.m, "/cluster/pools", token); !strings.Contains(body, "in use") {
			t.Errorf("the cluster page does not show %s the held slot as in use", a.name)
		}
	}
}

// TestUnderRBACATemplateOfAnotherWorkspaceIsNotFound: an Editor of team-a
// submits in team-a an experiment, a preview and a command naming alice's
// template, of a workspace they do not read: not found, as its page is;
// without it they are accepted.
func TestUnderRBACATemplateOfAnotherWorkspaceIsNotFound(t *testing.T) {
	w := newRBACWalk(t)
	config := "name: ed\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 3}\n"
	body := func(template string) string {
		b, _ := json.Marshal(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
			ProjectID: w.teamAProject, Config: config, Template: template}, Activate: new(false)})
		return string(b)
	}
	task := func(template string) string {
		return fmt.Sprintf(`{"config":"resources: {slots: 3}\n","entrypoint":["true"],"projectId":%d,"templateName":%q}`, w.teamAProject, template)
	}
	for _, tc := range []struct{ what, method, path, body string }{
		{"experiment", "POST", "/api/v1/experiments", body(w.alice.template)},
		{"preview", "POST", "/api/v1/preview-hp-search", body(w.alice.template)},
		{"command", "POST", "/api/v1/commands", task(w.alice.template)},
	} {
		var out map[string]any
		if code := api(t, w.m, tc.method, tc.path, w.editorToken, tc.body, &out); code != 404 {
			t.Errorf("%s with alice's template: %d %v, want 404", tc.what, code, out)
		}
	}
	if code := api(t, w.m, "POST", "/api/v1/experiments", w.editorToken, body(""), nil); code != 200 {
		t.Errorf("the editor's experiment without a template: %d, want 200", code)
	}
	if code := api(t, w.m, "POST", "/api/v1/commands", w.editorToken, task(""), nil); code != 200 {
		t.Errorf("the editor's command without a template: %d, want 200", code)
	}
	// alice, who reads it, uses it.
	aliceToken := login(t, w.m, "alice", "s3cret-pw")
	if code := api(t, w.m, "POST", "/api/v1/preview-hp-search", aliceToken, body(w.alice.template), nil); code != 200 {
		t.Errorf("alice's preview with her template: %d, want 200", code)
	}
}

// TestUnderRBACAShellIsOpenedByEditorsNotRestrictedOnes: ed's own shell in
// team-a, while he is an Editor there, gives its SSH keys (none here: it
// never started, 404) and its tunnel and terminal get past authorization;
// made EditorRestricted, he is refused all three (403), as a shell is a
// login that only those who may launch one open.
func TestUnderRBACAShellIsOpenedByEditorsNotRestrictedOnes(t *testing.T) {
	w := newRBACWalk(t)
	ctx := context.Background()
	ed, err := w.m.DB.UserByUsername(ctx, "ed")
	if err != nil {
		t.Fatal(err)
	}
	shell, err := w.m.DB.CreateTask(ctx, db.NewTask{Type: resolute.TaskShell, Config: []byte("{}"), UserID: ed.ID,
		ProjectID: w.teamAProject, ResourcePool: "retired"})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/api/v1/shells/" + shell + "/ssh", "/api/v1/tasks/" + shell + "/tunnel", "/tasks/" + shell + "/terminal"}
	for _, path := range paths {
		if code, body := getAs(t, w.m, path, freshSession(t, w.m, ed.ID)); code == 403 || code >= 500 {
			t.Errorf("GET %s as an Editor: %d %.200s, want past authorization", path, code, body)
		}
	}
	swap := func(endpoint, role string) {
		t.Helper()
		body := fmt.Sprintf(`{"userRoleAssignments":[{"userId":%d,"roleAssignment":{"role":{"name":%q},"scopeWorkspaceId":%d}}]}`, ed.ID, role, w.teamA)
		if code := api(t, w.m, "POST", "/api/v1/roles/"+endpoint, w.admin, body, nil); code != 200 {
			t.Fatalf("%s %s: %d", endpoint, role, code)
		}
	}
	swap("remove-assignments", "Editor")
	swap("add-assignments", "EditorRestricted")
	for _, path := range paths {
		if code, body := getAs(t, w.m, path, freshSession(t, w.m, ed.ID)); code != 403 {
			t.Errorf("GET %s as an EditorRestricted: %d %.200s, want 403", path, code, body)
		}
	}
}

// TestUnderRBACTheClustersUsageIsAClusterAdmins: the usage names every
// workspace's users, so under RBAC only a ClusterAdmin (alice, by role,
// not by the admin flag) reads it, on the API and the page; a Viewer of a
// workspace and a user with no role are refused.
func TestUnderRBACTheClustersUsageIsAClusterAdmins(t *testing.T) {
	w := newRBACWalk(t)
	day := time.Now().UTC().Format(time.DateOnly)
	paths := []string{"/api/v1/resources/allocation/aggregated?start_date=" + day + "&end_date=" + day, "/cluster/usage"}
	for _, path := range paths {
		if code, body := getAs(t, w.m, path, login(t, w.m, "alice", "s3cret-pw")); code != 200 {
			t.Errorf("GET %s as a ClusterAdmin: %d %.200s", path, code, body)
		}
		for _, a := range w.attackers {
			if code, _ := getAs(t, w.m, path, freshSession(t, w.m, a.user.ID)); code != 403 {
				t.Errorf("GET %s as %s: %d, want 403", path, a.name, code)
			}
		}
	}
}
