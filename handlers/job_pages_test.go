package handlers_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// sleeper creates an experiment of one trial that sleeps, needing slots.
func sleeper(t *testing.T, m *handlerstest.Master, token, name string, slots int) string {
	t.Helper()
	cfg := "name: " + name + "\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: " + itoa(int64(slots)) + "}\n"
	var out resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}}
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &out); code != 200 {
		t.Fatalf("create %s: %d", name, code)
	}
	return "experiment-" + itoa(out.Experiment.ID)
}

// queueWhen polls the job queue until ok says it is as wanted.
func queueWhen(t *testing.T, m *handlerstest.Master, token string, what string, ok func([]resolute.Job) bool) []resolute.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q resolute.JobQueueResponse
		api(t, m, "GET", "/api/v1/job-queues", token, "", &q)
		if ok(q.Jobs) {
			return q.Jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue never came to be %s: %+v", what, q.Jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func jobIDs(jobs []resolute.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobID)
	}
	return out
}

// inOrder fails unless the rows of the given jobs appear in this order.
func inOrder(t *testing.T, body string, ids ...string) {
	t.Helper()
	last := -1
	for _, id := range ids {
		i := strings.Index(body, `id="job-`+id+`"`)
		if i < 0 || i < last {
			t.Fatalf("rows not in the order %v", ids)
		}
		last = i
	}
}

// flashOf reads the flash message the next page shows.
func flashOf(t *testing.T, c *http.Client, m *handlerstest.Master) string {
	t.Helper()
	_, body := get(t, c, m, "/jobs")
	f := regexp.MustCompile(`<div class="flash ([a-z]+)" id="flash" role="status"><span>([^<]*)</span>`).FindStringSubmatch(body)
	if f == nil {
		t.Fatal("no flash message on /jobs")
	}
	return f[1] + ": " + f[2]
}

func TestTheJobQueuePageShowsThePoolAndItsFormsChangeIt(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	admin := login(t, m, "admin", "")
	a := sleeper(t, m, admin, "runs", 1)
	b := sleeper(t, m, admin, "waits", 1)
	c := sleeper(t, m, admin, "too-big", 2)
	queueWhen(t, m, admin, "a running, c stuck", func(jobs []resolute.Job) bool {
		return len(jobs) == 3 && jobs[0].State == "SCHEDULED" && strings.HasPrefix(jobs[2].Reason, "can never run")
	})
	pages := signInPages(t, m, "admin", "")

	resp, body := get(t, pages, m, "/jobs")
	if resp.StatusCode != 200 {
		t.Fatalf("/jobs: %d", resp.StatusCode)
	}
	wants(t, "the queue page", body, `id="job-queue" data-version="`, `id="pool-default"`, `id="queue-default" data-pool="default"`,
		"lower number runs first", `id="job-`+a+`"`, `href="/experiments/`, `id="up-`+c+`"`, `id="down-`+a+`"`,
		`action="/jobs/move"`, `id="edit-`+b+`"`, `name="priority"`, `class="wrap reason stuck"`, "can never run", "SCHEDULED", "QUEUED",
		"1/1", "0/2", `src="/static/jobs.`)
	inOrder(t, body, a, b, c)
	if regexp.MustCompile(`id="up-`+a+`"[^>]*disabled`).FindString(body) == "" {
		t.Error("the first job can move up")
	}
	if strings.Contains(body, `name="resource_pool"`) {
		t.Error("a pool select with only one pool")
	}
	if resp, body := get(t, pages, m, "/jobs/table"); resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="job-queue"`) {
		t.Fatalf("the tables fragment: %d %.40q", resp.StatusCode, body)
	}

	// The move buttons post the neighbour and come back with a message.
	resp, _ = post(t, pages, m, "/jobs/move", url.Values{"job": {c}, "ahead_of": {a}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/jobs" {
		t.Fatalf("move: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := flashOf(t, pages, m); got != "ok: Moved "+c+" ahead of "+a+"." {
		t.Errorf("after the move: %q", got)
	}
	_, body = get(t, pages, m, "/jobs")
	inOrder(t, body, c, a, b)
	post(t, pages, m, "/jobs/move", url.Values{"job": {c}, "behind_of": {b}})
	_, body = get(t, pages, m, "/jobs")
	inOrder(t, body, a, b, c)

	// Refusals come back as error messages, in sentences.
	tests := map[string]struct {
		path string
		form url.Values
		want string
	}{
		"a priority out of range": {"/jobs/update", url.Values{"job": {b}, "priority": {"150"}, "weight": {"1"}},
			"error: Priority must be between 1 and 99, got 150."},
		"a priority that is no number": {"/jobs/update", url.Values{"job": {b}, "priority": {"high"}},
			`error: Priority must be a whole number, got &#34;high&#34;.`},
		"a weight of nothing": {"/jobs/update", url.Values{"job": {b}, "weight": {"0"}}, "error: Weight must be more than 0, got 0."},
		"an unknown pool":     {"/jobs/update", url.Values{"job": {b}, "resource_pool": {"gpu"}}, `error: Pool &#34;gpu&#34; does not exist; the pools are default.`},
		"a move with no neighbour": {"/jobs/move", url.Values{"job": {a}},
			"error: Job " + a + " is already at that end of its queue."},
		"a job that is not one": {"/jobs/move", url.Values{"job": {"notebook-1"}, "ahead_of": {a}},
			`error: There is no job &#34;notebook-1&#34; on this master.`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if resp, _ := post(t, pages, m, tc.path, tc.form); resp.StatusCode != 303 {
				t.Fatalf("%d", resp.StatusCode)
			}
			if got := flashOf(t, pages, m); !strings.HasPrefix(got, tc.want) {
				t.Errorf("flash %q, want %q", got, tc.want)
			}
		})
	}

	// Only what changed is sent: an untouched priority stays the default.
	post(t, pages, m, "/jobs/update", url.Values{"job": {b}, "priority": {"42"}, "weight": {"2.5"}})
	if got := flashOf(t, pages, m); got != "ok: Updated "+b+": weight 2.5." {
		t.Errorf("after the update: %q", got)
	}
	post(t, pages, m, "/jobs/update", url.Values{"job": {b}, "priority": {"7"}, "weight": {"2.5"}})
	if got := flashOf(t, pages, m); got != "ok: Updated "+b+": priority 7." {
		t.Errorf("after the second update: %q", got)
	}
	jobs := queueWhen(t, m, admin, "b at priority 7", func(jobs []resolute.Job) bool { return len(jobs) == 3 })
	if jobs[1].JobID != b || jobs[1].Priority != 7 || jobs[1].Weight != 2.5 {
		t.Errorf("b after the updates: %+v", jobs[1])
	}

	// Another user sees the queue but no controls on admin's jobs, and may
	// not post them.
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	bob := signInPages(t, m, "bob", "s3cret-pw")
	_, body = get(t, bob, m, "/jobs")
	wants(t, "bob's queue", body, `id="job-`+a+`"`)
	if strings.Contains(body, `id="edit-`+a+`"`) || strings.Contains(body, `id="up-`+b+`"`) || strings.Contains(body, "drag-handle") {
		t.Error("bob is offered controls on admin's jobs")
	}
	resp, body = post(t, bob, m, "/jobs/move", url.Values{"job": {c}, "ahead_of": {a}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "job "+c+" belongs to admin; only they or an administrator may change it") {
		t.Errorf("bob's move: %d\n%.500s", resp.StatusCode, body)
	}
}

func TestTheJobEventsStreamAnnouncesEachChangeOfTheQueue(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	admin := login(t, m, "admin", "")
	a := sleeper(t, m, admin, "first", 2)
	b := sleeper(t, m, admin, "second", 2)
	pages := signInPages(t, m, "admin", "")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", m.URL+"/jobs/events", nil)
	resp, err := pages.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	// next reads the next queue event and returns its version.
	next := func() string {
		t.Helper()
		event := ""
		for lines.Scan() {
			switch line := lines.Text(); {
			case line == "event: queue":
				event = "queue"
			case event == "queue" && strings.HasPrefix(line, "data: "):
				return strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the stream ended: %v", lines.Err())
		return ""
	}
	first := next()
	if first == "" {
		t.Fatal("no version in the first event")
	}

	// A move by anyone (here through the API) is announced.
	if code := api(t, m, "POST", "/api/v1/job-queues", admin, `{"updates":[{"jobId":"`+b+`","aheadOf":"`+a+`"}]}`, nil); code != 200 {
		t.Fatalf("move: %d", code)
	}
	second := next()
	if second == first {
		t.Fatal("the same version after a move")
	}
	_, body := get(t, pages, m, "/jobs/table")
	inOrder(t, body, b, a)
	if !strings.Contains(body, `data-version="`+second+`"`) {
		// The scheduler may have said something new in between; the
		// next event then carries what the table shows.
		if v := next(); !strings.Contains(body, `data-version="`+v+`"`) {
			t.Errorf("the table's version is neither %s nor %s", second, v)
		}
	}
}

func TestTheClusterPageShowsEachPoolsSlotsAndWhatHoldsThem(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 2})
	admin := login(t, m, "admin", "")
	sleeper(t, m, admin, "holder", 1)
	queueWhen(t, m, admin, "running", func(jobs []resolute.Job) bool { return len(jobs) == 1 && jobs[0].State == "SCHEDULED" })
	pages := signInPages(t, m, "admin", "")

	// The slot shows its holder once the resource manager has started it.
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var resp *http.Response
		resp, body = get(t, pages, m, "/cluster")
		if resp.StatusCode != 200 {
			t.Fatalf("/cluster: %d", resp.StatusCode)
		}
		if strings.Contains(body, `href="/trials/`) || time.Now().After(deadline) {
			break
		}
	}
	wants(t, "the cluster page", body, `id="master-info"`, `id="cluster-pools" hx-get="/cluster/pools" hx-trigger="live:queue:default from:body,`,
		`id="pool-default"`, "default compute pool", "default aux pool", "lower number runs first", "1 / 2 slots used",
		`id="slot-default-0"`, `id="slot-default-1"`, "free", `href="/trials/`, "trial-")
	if resp, body := get(t, pages, m, "/cluster/pools"); resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="cluster-pools"`) {
		t.Fatalf("the pools fragment: %d %.40q", resp.StatusCode, body)
	}
}
