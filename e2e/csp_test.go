package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// violations collects what Chromium reports breaking a page's
// Content-Security-Policy: the console's "Refused to ..." errors and the
// securitypolicyviolation events of every document the page loads.
type violations struct {
	mu   sync.Mutex
	seen []string
}

func watchViolations(t *testing.T, page playwright.Page) *violations {
	t.Helper()
	v := &violations{}
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if strings.Contains(m.Text(), "Content Security Policy") {
			v.mu.Lock()
			v.seen = append(v.seen, "console: "+m.Text())
			v.mu.Unlock()
		}
	})
	// An init script runs in every document before its own scripts; the
	// policy does not apply to it.
	must(t, page.AddInitScript(playwright.Script{Content: playwright.String(`
		window.__csp = [];
		document.addEventListener('securitypolicyviolation', e =>
			window.__csp.push(e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber));`)}))
	return v
}

// check fails the test with every violation seen so far on page, in the
// document now shown or reported on the console.
func (v *violations) check(t *testing.T, page playwright.Page, where string) {
	t.Helper()
	events, err := page.Evaluate("window.__csp || []")
	must(t, err)
	v.mu.Lock()
	seen := append([]string(nil), v.seen...)
	v.seen = nil
	v.mu.Unlock()
	if list, ok := events.([]any); ok {
		for _, e := range list {
			seen = append(seen, fmt.Sprint(e))
		}
	}
	if len(seen) > 0 {
		t.Errorf("%s broke the Content-Security-Policy:\n%s", where, strings.Join(seen, "\n"))
	}
}

// TestNoPageBreaksTheContentSecurityPolicy visits the master's pages in
// Chromium, doing on each what a person does (charts, plots, dragging a
// job, typing in a terminal), and fails on anything the policy blocked.
func TestNoPageBreaksTheContentSecurityPolicy(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	ctx := t.Context()
	admin, err := m.DB.UserByUsername(ctx, "admin")
	must(t, err)
	as := authz.User(admin.User)

	// An experiment whose trials reported metrics: charts and plots.
	e, err := m.Experiments.Create(ctx, as, control.CreateRequest{Paused: true, ConfigYAML: `
name: plotted
entrypoint: sleep 30
hyperparameters:
  lr: {type: log, base: 10, minval: -3, maxval: -1}
searcher: {name: single, metric: loss}
`})
	must(t, err)
	var trials []resolute.Trial
	var reports []resolute.MetricsReport
	for i := range 3 {
		tr, err := m.DB.CreateTrial(ctx, e.ID, 100+i, resolute.StatePaused, []byte(fmt.Sprintf(`{"lr": %g}`, 0.001*float64(i+1))), 1)
		must(t, err)
		trials = append(trials, tr)
		must(t, m.DB.SetTrialBestValidation(ctx, tr.ID, 0.5/float64(i+1)))
		for step := int64(10); step <= 30; step += 10 {
			reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "validation",
				Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g}}`, float64(i+1)/float64(step)))},
				resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "training",
					Metrics: json.RawMessage(`{"avg_metrics": {"loss": 1}}`)})
		}
	}
	must(t, m.DB.InsertMetrics(ctx, reports))
	// Two experiments that wait (two slots of a one-slot master): a queue
	// to drag in.
	var jobs []string
	for _, name := range []string{"first", "second"} {
		w, err := m.Experiments.Create(ctx, as, control.CreateRequest{ConfigYAML: "name: " + name +
			"\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 2}\n"})
		must(t, err)
		jobs = append(jobs, control.JobID(w.ID))
	}
	login, err := client.New(m.URL).Login(ctx, "admin", "")
	must(t, err)
	api := client.New(m.URL, client.WithToken(login.Token))
	_, err = api.CreateModel(ctx, resolute.ModelRequest{Name: ptr("resnet"), Description: ptr("a model")})
	must(t, err)

	page := browser.NewPage(t, 1280)
	seen := watchViolations(t, page)

	// The detector works: an inline script, which the policy forbids, is
	// reported.
	resp, err := page.Goto(m.URL + "/login")
	must(t, err)
	if got, err := resp.HeaderValue("Content-Security-Policy"); err != nil || got != handlers.ContentSecurityPolicy {
		t.Fatalf("the login page's policy: %q, %v", got, err)
	}
	_, _ = page.AddScriptTag(playwright.PageAddScriptTagOptions{Content: playwright.String("window.inlineRan = true")})
	if ran, _ := page.Evaluate("window.inlineRan === true"); ran == true {
		t.Fatal("an inline script ran despite the policy")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		events, err := page.Evaluate("(window.__csp || []).length")
		must(t, err)
		if n, _ := events.(int); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the blocked inline script was not reported: the detector sees nothing")
		}
		time.Sleep(50 * time.Millisecond)
	}
	seen.mu.Lock()
	seen.seen = nil
	seen.mu.Unlock()

	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	seen.check(t, page, "the login page and the dashboard")

	visit := func(path string, do func()) {
		t.Helper()
		_, err := page.Goto(m.URL + path)
		must(t, err)
		if do != nil {
			do()
		}
		seen.check(t, page, path)
	}
	id := strconv.FormatInt(e.ID, 10)
	visit("/experiments", func() { must(t, expect(t, page.Locator("#experiment-table")).ToContainText("plotted")) })
	visit("/experiments/"+id, func() {
		must(t, expect(t, page.Locator(".uplot canvas").First()).ToBeVisible())
		for _, tab := range []string{"trials", "hyperparameters", "checkpoints", "logs", "notes"} {
			must(t, page.Locator("#tab-"+tab).Click())
			must(t, expect(t, page.Locator("#tab-"+tab)).ToHaveAttribute("aria-current", "page"))
			seen.check(t, page, "the experiment's "+tab+" tab")
		}
	})
	visit("/trials/"+strconv.FormatInt(trials[0].ID, 10), func() {
		must(t, expect(t, page.Locator("#chart-loss .uplot canvas")).ToBeVisible())
		must(t, page.Locator("#chart-loss .u-over").Hover())
		must(t, expect(t, page.Locator("#chart-loss .chart-tip")).ToBeVisible()) // placed by setting its style
		for _, tab := range []string{"hyperparameters", "checkpoints", "logs", "metadata", "overview"} {
			must(t, page.Locator("#tab-"+tab).Click())
			must(t, expect(t, page.Locator("#tab-"+tab)).ToHaveAttribute("aria-current", "page"))
			seen.check(t, page, "the trial's "+tab+" tab")
		}
	})
	visit(fmt.Sprintf("/compare?experiments=%d,%s", e.ID, strings.TrimPrefix(jobs[0], "experiment-")), nil)
	visit("/experiments/new", func() {
		must(t, page.Locator("#f-yaml").Fill("name: x\nentrypoint: sleep 1\nsearcher: {name: single, metric: loss}\n"))
		must(t, expect(t, page.Locator("#yaml-valid")).ToBeVisible())
	})
	visit("/jobs", func() {
		waitOrder(t, page, "default", jobs[0], jobs[1])
		dragAbove(t, page, page.Locator("#job-"+jobs[1]+" .drag-handle"), page.Locator("#job-"+jobs[0]))
		waitOrder(t, page, "default", jobs[1], jobs[0])
	})
	// A shell, for its terminal (after the queue, where it would stand too).
	shell, err := api.CreateTask(ctx, resolute.TaskShell, resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"})
	must(t, err)
	visit("/models", func() { must(t, expect(t, page.Locator("h1")).ToHaveText("Model Registry")) })
	visit("/models/resnet", nil)
	visit("/tasks", func() { must(t, expect(t, page.Locator("#tasks")).ToContainText(shell.ID)) })
	for deadline := time.Now().Add(60 * time.Second); !shell.Ready; time.Sleep(100 * time.Millisecond) {
		shell, err = api.Task(ctx, resolute.TaskShell, shell.ID)
		must(t, err)
		if time.Now().After(deadline) {
			t.Fatalf("shell not ready: %+v", shell)
		}
	}
	visit(shell.ServiceAddress, func() {
		must(t, expect(t, page.Locator("#terminal-status")).ToHaveText("connected"))
		rows := page.Locator(".xterm-rows")
		must(t, expect(t, rows).ToContainText("$")) // a prompt: tasks run as their own users, never root
		must(t, page.Keyboard().Type("echo $((40+2))-done"))
		must(t, page.Keyboard().Press("Enter"))
		must(t, expect(t, rows).ToContainText("42-done"))
	})
	for _, path := range []string{"/tasks/" + shell.ID, "/cluster", "/cluster/usage", "/workspaces", "/workspaces/1", "/projects/1", "/templates",
		"/account", "/admin/users", "/admin/users/1", "/logs", "/no/such/page", "/dashboard", "/docs/api"} {
		visit(path, func() { must(t, expect(t, page.Locator("h1")).ToBeVisible()) })
	}
}

func ptr[T any](v T) *T { return &v }
