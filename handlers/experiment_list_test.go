package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// listed is one experiment the list tests make.
type listed struct {
	name, user, state, labels, description, searcher string
	best                                             float64 // 0: none
	archived                                         bool
}

// makeListed creates the experiments (paused, then put in their state) and
// returns their IDs in order.
func makeListed(t *testing.T, m *handlerstest.Master, exps []listed) []int64 {
	t.Helper()
	ctx := t.Context()
	users := map[string]authz.Actor{}
	var ids []int64
	for _, x := range exps {
		if x.user == "" {
			x.user = "admin"
		}
		if _, ok := users[x.user]; !ok {
			u, err := m.DB.UserByUsername(ctx, x.user)
			if err != nil {
				hash, _ := auth.HashPassword("s3cret-pw")
				created, err := m.DB.CreateUser(ctx, x.user, "", hash, false)
				if err != nil {
					t.Fatal(err)
				}
				users[x.user] = authz.User(created)
			} else {
				users[x.user] = authz.User(u.User)
			}
		}
		searcher := "{name: single, metric: loss}"
		if x.searcher == "random" {
			searcher = "{name: random, metric: accuracy, smaller_is_better: false, max_trials: 3}"
		}
		cfg := fmt.Sprintf("name: %s\ndescription: %q\nlabels: [%s]\nentrypoint: sleep 30\nsearcher: %s\n"+
			"hyperparameters: {lr: {type: double, minval: 0.1, maxval: 1}}\n", x.name, x.description, x.labels, searcher)
		e, err := m.Experiments.Create(ctx, users[x.user], control.CreateRequest{Paused: true, ConfigYAML: cfg})
		if err != nil {
			t.Fatalf("create %s: %v", x.name, err)
		}
		if x.state != "" {
			if err := m.DB.SetExperimentState(ctx, e.ID, x.state); err != nil {
				t.Fatal(err)
			}
		}
		if x.best != 0 {
			if err := m.DB.SetExperimentBestValidation(ctx, e.ID, x.best); err != nil {
				t.Fatal(err)
			}
		}
		if x.archived {
			if err := m.DB.SetExperimentArchived(ctx, e.ID, true); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, e.ID)
	}
	return ids
}

var rowID = regexp.MustCompile(`<tr id="experiment-(\d+)"`)

// rows are the experiment IDs of a list page, in order.
func rows(body string) []int64 {
	var out []int64
	for _, m := range rowID.FindAllStringSubmatch(body, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, id)
	}
	return out
}

func TestTheExperimentListFiltersSortsAndPages(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ids := makeListed(t, m, []listed{
		{name: "resnet-a", labels: "vision", description: "ResNet on CIFAR", state: resolute.StateCompleted, best: 0.3},
		{name: "bert", user: "bob", labels: "nlp", searcher: "random", best: 0.9},
		{name: "resnet-b", labels: "vision, big", state: resolute.StateCompleted, best: 0.1},
		{name: "old", state: resolute.StateCanceled, archived: true},
		{name: "gpt_small", user: "bob", description: "100% text"},
	})
	a, bert, b, old, gpt := ids[0], ids[1], ids[2], ids[3], ids[4]
	c := signInPages(t, m, "admin", "")

	tests := map[string]struct {
		query string
		want  []int64
	}{
		"the default is newest first, without archived ones": {"", []int64{gpt, b, bert, a}},
		"archived ones show when asked":                      {"?archived=1", []int64{gpt, old, b, bert, a}},
		"a state":                                            {"?state=COMPLETED", []int64{b, a}},
		"a user":                                             {"?user=bob", []int64{gpt, bert}},
		"a label":                                            {"?label=vision", []int64{b, a}},
		"text in a description, any case":                    {"?q=cifar", []int64{a}},
		"text with LIKE's wildcards matches itself":          {"?q=100%25", []int64{gpt}},
		"an underscore is no wildcard":                       {"?q=t_s", []int64{gpt}},
		"filters combine":                                    {"?label=vision&q=resnet-b&state=COMPLETED", []int64{b}},
		"by name":                                            {"?sort=name", []int64{bert, gpt, a, b}},
		"by name, descending":                                {"?order=desc&sort=name", []int64{b, a, gpt, bert}},
		"by best validation, none last":                      {"?sort=best", []int64{b, a, bert, gpt}},
		"by best validation, descending, none still last":    {"?order=desc&sort=best", []int64{bert, a, b, gpt}},
		"by trials, most first":                              {"?sort=trials", []int64{bert, gpt, b, a}},
		"by user":                                            {"?sort=user", []int64{a, b, bert, gpt}},
		"by searcher":                                        {"?order=desc&sort=searcher", []int64{gpt, b, a, bert}},
		"oldest first":                                       {"?order=asc&sort=id", []int64{a, bert, b, gpt}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, c, m, "/experiments"+tc.query)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %s", tc.query, resp.StatusCode, resp.Header.Get("Location"))
			}
			if diff := cmp.Diff(tc.want, rows(body)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}

	// The row says the searcher, its metric and which way it improves.
	_, body := get(t, c, m, "/experiments")
	wants(t, "the list", body, `id="experiment-table"`, `id="experiment-filter"`, `id="experiment-batch"`,
		"accuracy ↑", "loss ↓", ">random<", ">single<", `<span class="tag">vision</span>`, `aria-sort="descending"`,
		`href="/experiments?sort=name"`, "4 experiments")

	// The poll keeps the query; htmx gets the table alone, with the URL to show.
	_, body = get(t, c, m, "/experiments?sort=name&state=COMPLETED")
	wants(t, "a filtered list", body, `hx-get="/experiments/table?sort=name&amp;state=COMPLETED"`, `name="back" form="experiment-batch" value="/experiments?sort=name&amp;state=COMPLETED"`)
	req, _ := http.NewRequest("GET", m.URL+"/experiments?sort=name&state=COMPLETED", nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", "experiment-table")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("HX-Push-Url") != "/experiments?sort=name&state=COMPLETED" {
		t.Errorf("HX-Push-Url %q", resp.Header.Get("HX-Push-Url"))
	}
	_, body = get(t, c, m, "/experiments/table?sort=name&state=COMPLETED")
	if !strings.HasPrefix(body, `<div id="experiment-table"`) || !slices.Equal(rows(body), []int64{a, b}) {
		t.Errorf("the table fragment: %v\n%s", rows(body), body)
	}

	// The column chooser: the default columns leave the pool out; the
	// chooser's boxes become one cols parameter, in table order; the default
	// choice is no parameter at all.
	_, body = get(t, c, m, "/experiments")
	if strings.Contains(body, `class="col-pool"`) || !strings.Contains(body, `class="col-user"`) {
		t.Errorf("the default columns: pool shown or user hidden")
	}
	resp, _ = get(t, c, m, "/experiments?col=pool&col=state&sort=name")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/experiments?cols=state%2Cpool&sort=name" {
		t.Errorf("the chooser's URL: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = get(t, c, m, "/experiments?col=state&col=progress&col=best&col=searcher&col=trials&col=user&col=start&col=labels")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/experiments" {
		t.Errorf("the default choice's URL: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, body = get(t, c, m, "/experiments?cols=state%2Cpool&sort=name")
	wants(t, "the chosen columns", body, `class="col-pool"`, `id="col-pool" checked`, `href="/experiments?cols=state%2Cpool&amp;order=desc&amp;sort=name"`)
	if strings.Contains(body, `class="col-user"`) || strings.Contains(body, `>random<`) {
		t.Errorf("unchosen columns shown")
	}

	// A form's empty fields go: one list, one URL.
	resp, _ = get(t, c, m, "/experiments?q=&state=COMPLETED&user=&label=&sort=id&order=desc")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/experiments?state=COMPLETED" {
		t.Errorf("a form's URL: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Bad input is refused, naming the parameter.
	for query, want := range map[string]string{
		"?sort=colour":      "sort: unknown column &#34;colour&#34;",
		"?page=0":           "page: expected a positive integer",
		"?cols=state,color": "cols: unknown column &#34;color&#34;",
		"?page=two":         "page: expected a positive integer",
		"?order=sideways":   "order: expected asc or desc",
		"?state=SLEEPING":   "state: unknown state",
		"?archived=maybe":   "archived: expected 1 or 0",
		"/table?project=x":  "project: expected a positive integer",
	} {
		path := "/experiments" + query
		resp, body := get(t, c, m, path)
		if resp.StatusCode != 400 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 400 with %q", path, resp.StatusCode, want)
		}
	}
}

func TestTheExperimentListPagesThroughMany(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var many []listed
	for i := range 53 {
		many = append(many, listed{name: fmt.Sprintf("run-%02d", i)})
	}
	ids := makeListed(t, m, many)
	c := signInPages(t, m, "admin", "")

	_, body := get(t, c, m, "/experiments")
	got := rows(body)
	if len(got) != 50 || got[0] != ids[52] || got[49] != ids[3] {
		t.Fatalf("page 1: %d rows from %v", len(got), got[:1])
	}
	wants(t, "page 1", body, "Page 1 of 2 · 53 experiments", `href="/experiments?page=2" hx-get="/experiments?page=2" hx-target="#experiment-table"`, `rel="next"`)
	_, body = get(t, c, m, "/experiments?page=2")
	if diff := cmp.Diff([]int64{ids[2], ids[1], ids[0]}, rows(body)); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	wants(t, "page 2", body, "Page 2 of 2", `rel="prev"`)
	// The sort stays on every page, and names sort as text.
	_, body = get(t, c, m, "/experiments?page=2&sort=name")
	if diff := cmp.Diff([]int64{ids[50], ids[51], ids[52]}, rows(body)); diff != "" {
		t.Errorf("page 2 by name (-want +got):\n%s", diff)
	}
	_, body = get(t, c, m, "/experiments?page=9")
	wants(t, "past the end", body, "No more experiments.")
}

func TestProjectAndWorkspacePagesListTheirExperiments(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	var ws resolute.WorkspaceResponse
	api(t, m, "POST", "/api/v1/workspaces", admin, `{"name":"vision"}`, &ws)
	var p resolute.ProjectResponse
	api(t, m, "POST", "/api/v1/workspaces/"+itoa(ws.Workspace.ID)+"/projects", admin, `{"name":"cifar"}`, &p)
	ids := makeListed(t, m, []listed{{name: "elsewhere"}, {name: "here", state: resolute.StateCompleted}})
	c := signInPages(t, m, "admin", "")
	if resp, _ := post(t, c, m, "/experiments/batch", url.Values{"action": {"move"}, "experiments": {itoa(ids[1])},
		"project_id": {itoa(p.Project.ID)}, "back": {"/experiments"}}); resp.StatusCode != 303 {
		t.Fatalf("move: %d", resp.StatusCode)
	}

	for _, path := range []string{"/projects/" + itoa(p.Project.ID), "/workspaces/" + itoa(ws.Workspace.ID)} {
		resp, body := get(t, c, m, path)
		if resp.StatusCode != 200 || !slices.Equal(rows(body), []int64{ids[1]}) {
			t.Fatalf("%s: %d, rows %v", path, resp.StatusCode, rows(body))
		}
		wants(t, path, body, `id="experiment-filter"`, `action="`+path+`"`, `id="experiment-batch"`)
		_, body = get(t, c, m, path+"?state=ACTIVE")
		wants(t, path+" filtered", body, "No ACTIVE experiments match the filter.")
	}
	_, body := get(t, c, m, "/experiments/table?project="+itoa(p.Project.ID))
	wants(t, "the project's poll", body, `hx-get="/experiments/table?project=`+itoa(p.Project.ID)+`"`)
	if !slices.Equal(rows(body), []int64{ids[1]}) {
		t.Errorf("the project's table: %v", rows(body))
	}
	// Counts and the last activity, on the workspace list and the project's page.
	_, body = get(t, c, m, "/workspaces")
	if !regexp.MustCompile(`id="workspace-` + itoa(ws.Workspace.ID) + `"><td><a [^>]*>vision</a></td><td class="num">1</td><td class="num">1</td><td class="num">0</td><td>20`).MatchString(body) {
		t.Errorf("the workspace list lacks the counts and activity:\n%s", body)
	}
	_, body = get(t, c, m, "/projects/"+itoa(p.Project.ID))
	wants(t, "the project's page", body, `id="project-activity"`, "<dt>Experiments</dt><dd>1</dd>")
}

func TestBatchActionsReportEachExperiment(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ids := makeListed(t, m, []listed{
		{name: "done", state: resolute.StateCompleted},
		{name: "paused"},
		{name: "bobs", user: "bob", state: resolute.StateCompleted},
		{name: "also-done", state: resolute.StateCanceled},
	})
	done, paused, bobs, alsoDone := ids[0], ids[1], ids[2], ids[3]
	hash, _ := auth.HashPassword("s3cret-pw")
	if _, err := m.DB.CreateUser(t.Context(), "carol", "", hash, false); err != nil {
		t.Fatal(err)
	}
	c := signInPages(t, m, "carol", "s3cret-pw") // not an administrator: may change only her own
	admin := signInPages(t, m, "admin", "")

	batch := func(c *http.Client, form url.Values) (int, string, string) {
		t.Helper()
		resp, _ := post(t, c, m, "/experiments/batch", form)
		loc := resp.Header.Get("Location")
		if resp.StatusCode != 303 {
			return resp.StatusCode, loc, ""
		}
		_, page := get(t, c, m, loc)
		flash := regexp.MustCompile(`(?s)id="flash" role="status"><span>(.*?)</span>`).FindStringSubmatch(page)
		if flash == nil {
			return resp.StatusCode, loc, ""
		}
		return resp.StatusCode, loc, flash[1]
	}
	back := "/experiments?state=COMPLETED"

	// Archive: the finished ones are archived, the paused one is refused by
	// name, and the list it came from is where it goes back to.
	code, loc, flash := batch(admin, url.Values{"action": {"archive"}, "experiments": {itoa(done), itoa(paused), itoa(alsoDone)}, "back": {back}})
	if code != 303 || loc != back {
		t.Fatalf("archive: %d %q", code, loc)
	}
	wants(t, "the archive report", flash, fmt.Sprintf("Archived 2 of 3 experiments (%d, %d).", done, alsoDone),
		fmt.Sprintf("Refused experiment %d: experiment %d is PAUSED; only finished experiments can be archived.", paused, paused))
	for id, want := range map[int64]bool{done: true, alsoDone: true, paused: false} {
		if e, _ := m.DB.Experiment(t.Context(), id); e.Archived != want {
			t.Errorf("experiment %d archived %v", id, e.Archived)
		}
	}

	// Someone else's experiments are refused one by one; when none was
	// hers to change, the answer is 403 with the same report.
	resp, page := post(t, c, m, "/experiments/batch", url.Values{"action": {"unarchive"}, "experiments": {itoa(done) + "," + itoa(bobs)}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("carol's batch: %d, want 403", resp.StatusCode)
	}
	wants(t, "carol's report", page, "Could not unarchive any of the 2 experiments.",
		fmt.Sprintf("Refused experiment %d: experiment %d belongs to admin", done, done))

	// An unknown experiment is refused by name, the others done.
	_, _, flash = batch(admin, url.Values{"action": {"kill"}, "experiments": {itoa(paused), "999"}})
	wants(t, "the kill report", flash, fmt.Sprintf("Killing 1 of 2 experiments (%d).", paused), "Refused experiment 999: experiment 999")

	// Compare and TensorBoard open pages of their own.
	if code, loc, _ := batch(admin, url.Values{"action": {"compare"}, "experiments": {itoa(done), itoa(bobs)}}); code != 303 ||
		loc != "/compare?experiments="+itoa(done)+","+itoa(bobs) {
		t.Errorf("compare: %d %q", code, loc)
	}
	if _, loc, flash := batch(admin, url.Values{"action": {"compare"}, "experiments": {itoa(done)}}); loc != "/experiments" ||
		!strings.Contains(flash, "at least two") {
		t.Errorf("compare one: %q %q", loc, flash)
	}
	if _, loc, _ := batch(admin, url.Values{"action": {"tensorboard"}, "experiments": {itoa(done)}}); !strings.HasPrefix(loc, "/tasks/") {
		t.Errorf("tensorboard: %q", loc)
	}
	if _, _, flash := batch(admin, url.Values{"action": {"pause"}}); !strings.Contains(flash, "Tick the experiments to pause first.") {
		t.Errorf("nothing ticked: %q", flash)
	}
	// A foreign back is not followed.
	if _, loc, _ := batch(admin, url.Values{"action": {"pause"}, "experiments": {itoa(paused)}, "back": {"//evil.example/"}}); loc != "/experiments" {
		t.Errorf("back to %q", loc)
	}

	// Bad input is refused, naming the field.
	for name, form := range map[string]url.Values{
		"action: unknown batch action":             {"action": {"explode"}, "experiments": {itoa(done)}},
		"experiments: expected a positive integer": {"action": {"pause"}, "experiments": {"seven"}},
	} {
		resp, body := post(t, admin, m, "/experiments/batch", form)
		if resp.StatusCode != 400 || !strings.Contains(body, name) {
			t.Errorf("%v: %d, want 400 with %q", form, resp.StatusCode, name)
		}
	}
}

func TestTheDashboardShowsMyExperimentsQueuedJobsAndPools(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	ids := makeListed(t, m, []listed{{name: "mine-done", state: resolute.StateCompleted, best: 0.25}, {name: "bobs", user: "bob"}})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	// Two slots on a one-slot master: it waits in the queue for good.
	big, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{ConfigYAML: "name: too-big\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 2}\n"})
	if err != nil {
		t.Fatal(err)
	}
	c := signInPages(t, m, "admin", "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := get(t, c, m, "/dashboard/live")
		if resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="dashboard-live" hx-get="/dashboard/live"`) {
			t.Fatalf("the live fragment: %d\n%s", resp.StatusCode, body)
		}
		if strings.Contains(body, `id="my-queued"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued job never shows:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, body := get(t, c, m, "/dashboard")
	wants(t, "the dashboard", body, "Welcome, admin", `id="my-experiment-`+itoa(ids[0])+`"`, `id="my-experiment-`+itoa(big.ID)+`"`,
		"0.25", "loss ↓", `href="/experiments/`+itoa(big.ID)+`">too-big</a>`, `id="utilization-default"`, "0 / 1",
		`id="quick-new-experiment"`, `id="launch-notebook"`, `id="launch-cpu-notebook"`, `id="no-my-tasks"`,
		`href="/experiments?user=admin"`)
	if strings.Contains(body, `id="my-experiment-`+itoa(ids[1])+`"`) {
		t.Error("the dashboard shows bob's experiment as mine")
	}
}
