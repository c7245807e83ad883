package handlers_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// pageFixture is a paused experiment whose four trials reported metrics,
// checkpoints and log lines, as if they had run.
type pageFixture struct {
	m      *handlerstest.Master
	e      resolute.Experiment
	trials []resolute.Trial
}

func newPageFixture(t *testing.T) pageFixture {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: paged
description: a page of tabs
labels: [first]
entrypoint: sleep 30
hyperparameters:
  lr: {type: log, base: 10, minval: -3, maxval: -1}
  opt: {type: categorical, vals: [sgd, adam]}
  model: {depth: 3}
searcher: {name: single, metric: loss}
`})
	if err != nil {
		t.Fatal(err)
	}
	f := pageFixture{m: m, e: e}
	ctx := t.Context()
	for i := range 4 {
		hp := fmt.Sprintf(`{"lr": %g, "opt": %q, "model": {"depth": %d}}`, 0.01*float64(i+1), []string{"sgd", "adam"}[i%2], 2+i)
		tr, err := m.DB.CreateTrial(ctx, e.ID, 100+i, resolute.StatePaused, []byte(hp), 1)
		if err != nil {
			t.Fatal(err)
		}
		loss := 1 / float64(i+1)
		if err := m.DB.SetTrialBestValidation(ctx, tr.ID, loss); err != nil {
			t.Fatal(err)
		}
		if err := m.DB.InsertMetrics(ctx, []resolute.MetricsReport{
			{TrialID: tr.ID, StepsCompleted: 10, Group: "training", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 2}}`)},
			{TrialID: tr.ID, StepsCompleted: 10, Group: "validation", Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g}}`, loss))},
		}); err != nil {
			t.Fatal(err)
		}
		uuid := fmt.Sprintf("0000000%d-0000-4000-8000-000000000000", i)
		if err := m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: tr.ID, ExperimentID: e.ID, AllocationID: tr.TaskID() + ".1",
			TaskID: tr.TaskID(), StepsCompleted: 10, State: "COMPLETED", Resources: map[string]int64{"state": 2048}, Size: 2048, Metadata: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if err := m.DB.SetTrialLatestCheckpoint(ctx, tr.ID, uuid); err != nil {
			t.Fatal(err)
		}
		if err := m.DB.InsertTaskLogs(ctx, []resolute.TaskLog{
			{TaskID: tr.TaskID(), AllocationID: tr.TaskID() + ".1", Time: time.Now(), Level: "INFO", Log: fmt.Sprintf("trial %d says hello\n", i)},
			{TaskID: tr.TaskID(), AllocationID: tr.TaskID() + ".1", Time: time.Now(), Level: "ERROR", Log: fmt.Sprintf("trial %d <b>fails</b>\n", i)},
		}); err != nil {
			t.Fatal(err)
		}
		tr, _ = m.DB.Trial(ctx, tr.ID)
		f.trials = append(f.trials, tr)
	}
	return f
}

func (f pageFixture) path(suffix string) string { return "/experiments/" + itoa(f.e.ID) + suffix }

func TestEveryTabOfAnExperimentsPage(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tests := map[string]struct {
		query string
		want  []string
		not   []string
	}{
		"the overview charts and lists the best trials first": {"", []string{`id="experiment-header"`, `id="experiment-tabs"`,
			`id="tab-overview" href="/experiments/` + itoa(f.e.ID) + `" aria-current="page"`, `id="best-trials"`,
			`id="best-trials-` + itoa(f.trials[3].ID) + `"`, `id="latest-metrics"`, `data-chart="experiment"`, `id="experiment-chart-options"`, "a page of tabs", `id="experiment-labels"`, "first",
			`id="experiment-scheduling"`, "a lower number runs first"}, []string{`id="checkpoints"`, `id="fork-form"`}},
		"the trials tab has a column per hyperparameter": {"?tab=trials", []string{`id="trials"`, `<a href="/experiments/` + itoa(f.e.ID) + `?sort=hp.lr&amp;tab=trials" id="sort-hp.lr">lr</a>`,
			">model.depth</a></th>", ">opt</a></th>", ">Checkpoints</a></th>", `id="trial-columns"`, `id="trial-compare"`, `id="trial-pager"`, `<code title="adam">adam</code>`,
			`id="tab-trials" href="/experiments/` + itoa(f.e.ID) + `?tab=trials" aria-current="page"`}, []string{`id="best-trials"`}},
		"the hyperparameters tab plots the varying ones": {"?tab=hyperparameters", []string{`id="parallel-coordinates"`, "<polyline",
			`id="scatter-lr"`, `&#34;name&#34;:&#34;lr&#34;,&#34;metric&#34;:&#34;loss&#34;,&#34;log&#34;:true`, `id="scatter-opt"`, `&#34;categories&#34;:[&#34;adam&#34;,&#34;sgd&#34;]`, `id="scatter-model.depth"`, "Trial " + itoa(f.trials[0].ID) + ": lr = 0.01"}, nil},
		"the checkpoints tab downloads and registers": {"?tab=checkpoints", []string{`id="checkpoints"`, "2.0 KiB",
			"/api/v1/checkpoints/00000003-0000-4000-8000-000000000000/download", `name="model_name"`}, nil},
		"the configuration tab shows both configs and forks": {"?tab=configuration", []string{`id="experiment-config"`,
			`id="experiment-original-config"`, `id="fork-form"`, `id="f-yaml"`, "name: paged", `hx-post="/experiments/new/validate"`, `id="yaml-check"`, `<option value="` + itoa(f.trials[2].ID) + `"`}, nil},
		"the logs tab shows every trial's lines, escaped": {"?tab=logs", []string{`id="experiment-log-lines"`, "trial 0 says hello",
			"trial 3 &lt;b&gt;fails&lt;/b&gt;", `id="log-download"`, `id="experiment-log-poll" hx-get`}, []string{"<b>fails"}},
		"the logs tab filters by level and text": {"?tab=logs&level=ERROR&search=trial+2", []string{"trial 2 &lt;b&gt;fails"},
			[]string{"says hello", "trial 1 &lt;b&gt;"}},
		"the notes tab offers the editor": {"?tab=notes", []string{`id="experiment-notes"`, "No notes yet.", `id="notes-form"`}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, c, f.m, f.path(tc.query))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			wants(t, "the page", body, tc.want...)
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("the page has %s", n)
				}
			}
		})
	}

	// The trials tab sorts by any column, and its poll keeps the order.
	_, body := get(t, c, f.m, f.path("?order=desc&sort=best&tab=trials"))
	wants(t, "the sorted trials", body, `aria-sort="descending"`, `?sort=hp.lr&amp;tab=trials"`,
		`hx-get="/experiments/`+itoa(f.e.ID)+`/live?order=desc&amp;sort=best&amp;tab=trials"`)
	order := regexp.MustCompile(`id="trials-(\d+)"`).FindAllStringSubmatch(body, -1)
	if len(order) != 5 || order[0][1] != itoa(f.trials[0].ID) || order[3][1] != itoa(f.trials[3].ID) {
		t.Errorf("trials by best loss, worst first: %v", order)
	}
	_, body = get(t, c, f.m, f.path("?sort=hp.opt&tab=trials"))
	if i, j := strings.Index(body, `id="trials-`+itoa(f.trials[1].ID)+`"`), strings.Index(body, `id="trials-`+itoa(f.trials[0].ID)+`"`); i < 0 || i > j {
		t.Error("sorted by opt, an adam trial does not come before an sgd one")
	}
	if resp, body := get(t, c, f.m, f.path("?sort=color&tab=trials")); resp.StatusCode != 400 || !strings.Contains(body, "sort: unknown column &#34;color&#34;") {
		t.Errorf("an unknown column: %d", resp.StatusCode)
	}

	// The live fragment follows the tab.
	resp, body := get(t, c, f.m, f.path("/live?tab=trials"))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="experiment-live" hx-get="/experiments/`+itoa(f.e.ID)+`/live?tab=trials"`) {
		t.Fatalf("live fragment: %d\n%.300s", resp.StatusCode, body)
	}
	wants(t, "the live trials", body, `id="trials"`)
	// The overview's poll offers the metrics of the trials' latest reports.
	_, body = get(t, c, f.m, f.path("/live?tab=overview"))
	wants(t, "the live overview", body, `<template id="experiment-chart-options">`, `value="training/loss"`, `value="validation/loss"`)
	if resp, body := get(t, c, f.m, f.path("?tab=sideways")); resp.StatusCode != 400 || !strings.Contains(body, `tab: unknown tab &#34;sideways&#34;`) {
		t.Fatalf("an unknown tab: %d", resp.StatusCode)
	}
}

func TestExperimentLogsFollowAndDownload(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	_, body := get(t, c, f.m, f.path("/logs/lines?after=0&level=WARNING"))
	wants(t, "the lines", body, `hx-swap-oob="beforeend:#experiment-log-lines"`, "[trial "+itoa(f.trials[1].ID)+"]", "trial 1 &lt;b&gt;fails")
	if strings.Contains(body, "says hello") {
		t.Error("the WARNING filter lets an INFO line through")
	}
	resp, body := get(t, c, f.m, f.path("/logs/download?search=hello"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") != `attachment; filename="experiment-`+itoa(f.e.ID)+`-logs.txt"` {
		t.Fatalf("download: %d %v", resp.StatusCode, resp.Header)
	}
	if n := strings.Count(body, "\n"); n != 4 || !strings.Contains(body, "INFO trial 3 says hello") {
		t.Fatalf("download has %d lines:\n%s", n, body)
	}
	for path, message := range map[string]string{
		"/logs/lines?after=x":          `after: expected a line id (a whole number), got &#34;x&#34;`,
		"/logs/lines?after=0&level=no": "level: expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
		"/logs/download?level=loud":    "level: expected one of",
	} {
		if resp, body := get(t, c, f.m, f.path(path)); resp.StatusCode != 400 || !strings.Contains(body, message) {
			t.Errorf("%s: %d, want 400 with %q", path, resp.StatusCode, message)
		}
	}
}

func TestNotesAreSavedAndRenderedSafely(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	notes := "# Findings\n\n**lr 0.04** wins. <script>alert(1)</script> [x](javascript:alert(1)) [run](/trials/1)"
	resp, body := post(t, c, f.m, f.path("/notes"), url.Values{"notes": {notes}}, "HX-Request", "true")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, `<section id="experiment-notes"`) {
		t.Fatalf("htmx save: %d\n%s", resp.StatusCode, body)
	}
	wants(t, "the rendered notes", body, "<h1>Findings</h1>", "<strong>lr 0.04</strong>", "&lt;script&gt;", "[x](javascript:alert(1))",
		`<a href="/trials/1" rel="nofollow noopener">run</a>`)
	if strings.Contains(body, "<script>") || strings.Contains(body, `href="javascript`) {
		t.Fatal("the notes let HTML or a script link through")
	}
	if e, _ := f.m.DB.Experiment(t.Context(), f.e.ID); e.Notes != notes {
		t.Fatalf("stored notes %q", e.Notes)
	}
	// Without htmx the form goes back to the tab.
	resp, _ = post(t, c, f.m, f.path("/notes"), url.Values{"notes": {"plain"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != f.path("?tab=notes") {
		t.Fatalf("plain save: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Bad notes are refused with 400 naming the field, and what was typed
	// stays; a NUL, refused at the door for every form, gets the error page.
	huge := strings.Repeat("x", 64<<10+1)
	for name, tc := range map[string]struct {
		notes   string
		htmx    bool
		message string
	}{
		"too long, by htmx":  {huge, true, "notes: must be at most 65536 bytes"},
		"too long, plainly":  {huge, false, "notes: must be at most 65536 bytes"},
		"a NUL, by htmx":     {"a\x00b", true, "notes: must not contain NUL characters"},
		"not UTF-8, plainly": {"\xff\xfe", false, "notes: must be UTF-8 text without NUL characters"},
	} {
		t.Run(name, func(t *testing.T) {
			var headers []string
			if tc.htmx {
				headers = []string{"HX-Request", "true"}
			}
			resp, body := post(t, c, f.m, f.path("/notes"), url.Values{"notes": {tc.notes}}, headers...)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if strings.Contains(tc.notes, "\x00") {
				wants(t, "the refusal", body, `id="error-page"`, tc.message)
				return
			}
			wants(t, "the refusal", body, `id="e-notes"`, tc.message, `id="notes-editor" open`)
		})
	}

	// Only the owner or an administrator edits them.
	admin := login(t, f.m, "admin", "")
	api(t, f.m, "POST", "/api/v1/users", admin, `{"user":{"username":"eve"},"password":"s3cret-pw"}`, nil)
	eve := signInPages(t, f.m, "eve", "s3cret-pw")
	if resp, _ := post(t, eve, f.m, f.path("/notes"), url.Values{"notes": {"mine now"}}); resp.StatusCode != 403 {
		t.Fatalf("another user's edit: %d", resp.StatusCode)
	}
	if _, body := get(t, eve, f.m, f.path("?tab=notes")); strings.Contains(body, `id="notes-form"`) {
		t.Error("another user is offered the editor")
	}
}

func TestLabelsAreAddedAndRemovedInPlace(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	hx := []string{"HX-Request", "true"}
	resp, body := post(t, c, f.m, f.path("/labels/add"), url.Values{"label": {" tuned "}}, hx...)
	if resp.StatusCode != 200 || !strings.Contains(body, `id="label-list"`) || !strings.Contains(body, `aria-label="Remove label tuned"`) {
		t.Fatalf("add: %d\n%s", resp.StatusCode, body)
	}
	post(t, c, f.m, f.path("/labels/add"), url.Values{"label": {"tuned"}}, hx...) // twice is once
	resp, _ = post(t, c, f.m, f.path("/labels/remove"), url.Values{"label": {"first"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != f.path("") {
		t.Fatalf("plain remove: %d", resp.StatusCode)
	}
	if e, _ := f.m.DB.Experiment(t.Context(), f.e.ID); strings.Join(e.Labels, ",") != "tuned" {
		t.Fatalf("labels %q", e.Labels)
	}

	for name, tc := range map[string]struct {
		label   string
		htmx    bool
		message string
	}{
		"an empty label, by htmx":   {"  ", true, "label: must not be empty"},
		"an empty label, plainly":   {"", false, "label: must not be empty"},
		"a label too long":          {strings.Repeat("l", 256), true, "label: must be at most 255 characters"},
		"a label with a line break": {"a\nb", true, "label: must be text without control characters"},
	} {
		t.Run(name, func(t *testing.T) {
			var headers []string
			if tc.htmx {
				headers = hx
			}
			resp, body := post(t, c, f.m, f.path("/labels/add"), url.Values{"label": {tc.label}}, headers...)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			wants(t, "the refusal", body, `id="e-label"`, tc.message, `aria-invalid="true"`)
		})
	}
}

func TestSchedulingIsEditedFromTheHeader(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	resp, body := post(t, c, f.m, f.path("/scheduling"), url.Values{"priority": {"7"}, "weight": {"2.5"}, "max_slots": {"3"}}, "HX-Request", "true")
	if resp.StatusCode != 200 || !strings.Contains(body, `id="scheduling-saved"`) ||
		!strings.Contains(body, `<span id="scheduling-summary" hx-swap-oob="true">Scheduling: priority 7 · weight 2.5 · max slots 3</span>`) {
		t.Fatalf("save: %d\n%s", resp.StatusCode, body)
	}
	e, _ := f.m.DB.Experiment(t.Context(), f.e.ID)
	if e.Priority == nil || *e.Priority != 7 || e.Weight != 2.5 || e.MaxSlots == nil || *e.MaxSlots != 3 {
		t.Fatalf("stored priority %v weight %v max slots %v", e.Priority, e.Weight, e.MaxSlots)
	}
	resp, _ = post(t, c, f.m, f.path("/scheduling"), url.Values{"priority": {"7"}, "weight": {"2.5"}, "max_slots": {""}})
	if resp.StatusCode != 303 {
		t.Fatalf("plain save: %d", resp.StatusCode)
	}
	if e, _ := f.m.DB.Experiment(t.Context(), f.e.ID); e.MaxSlots != nil {
		t.Fatalf("an empty max slots keeps %v", *e.MaxSlots)
	}

	for name, tc := range map[string]struct {
		form    url.Values
		field   string
		message string
	}{
		"a priority out of range": {url.Values{"priority": {"100"}}, "priority", `priority: expected a whole number from 1 to 99, got &#34;100&#34;`},
		"a weight of zero":        {url.Values{"weight": {"0"}}, "weight", "weight: expected a number more than 0"},
		"a word for max slots":    {url.Values{"max_slots": {"many"}}, "max_slots", "max_slots: expected a whole number of at least 1"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := post(t, c, f.m, f.path("/scheduling"), tc.form, "HX-Request", "true")
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			wants(t, "the refusal", body, `id="e-`+tc.field+`"`, tc.message)
			resp, body = post(t, c, f.m, f.path("/scheduling"), tc.form)
			if resp.StatusCode != 400 {
				t.Fatalf("plain status %d", resp.StatusCode)
			}
			wants(t, "the page", body, `id="experiment-header"`, `id="e-`+tc.field+`"`, tc.message)
		})
	}

	// An experiment that ended keeps its scheduling.
	if err := f.m.Experiments.SetState(t.Context(), authz.System, f.e.ID, "kill"); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, f.m, f.e.ID, 30*time.Second)
	if resp, _ := post(t, c, f.m, f.path("/scheduling"), url.Values{"priority": {"5"}}); resp.StatusCode != 409 {
		t.Fatalf("an ended experiment: %d", resp.StatusCode)
	}
	resp, body = post(t, c, f.m, f.path("/scheduling"), url.Values{"priority": {"5"}}, "HX-Request", "true")
	if resp.StatusCode != 409 || !strings.Contains(body, `id="e-scheduling"`) || strings.Contains(body, `id="scheduling-form"`) {
		t.Fatalf("an ended experiment's kept form: %d\n%s", resp.StatusCode, body)
	}
	if _, body := get(t, c, f.m, f.path("")); strings.Contains(body, `id="scheduling-form"`) {
		t.Error("an ended experiment offers the scheduling form")
	}
}

func TestContinueATrialFromItsCheckpoint(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[2]
	_, body := get(t, c, f.m, "/trials/"+itoa(tr.ID))
	wants(t, "the trial page", body, `id="continue-trial" href="/experiments/`+itoa(f.e.ID)+`?tab=configuration&amp;continue=`+itoa(tr.ID)+`#fork-form"`)
	_, body = get(t, c, f.m, f.path("?tab=configuration&continue="+itoa(tr.ID)))
	// The fork's config: the trial's hyperparameters and one trial.
	wants(t, "the continue form", body, "hyperparameters:\n  lr: 0.03\n  opt: sgd\n  model:\n    depth: 4\n",
		"searcher:\n  name: single\n  metric: loss\n  smaller_is_better: true\n", `<option value="`+itoa(tr.ID)+`" selected>`)
	if resp, body := get(t, c, f.m, f.path("?tab=configuration&continue=999")); resp.StatusCode != 400 || !strings.Contains(body, "continue: expected a trial of experiment") {
		t.Fatalf("continue a stranger: %d", resp.StatusCode)
	}

	// Submitted as it is, it trains that trial on from its checkpoint.
	text := body[strings.Index(body, `name="yaml"`):]
	text = text[strings.Index(text, ">")+1 : strings.Index(text, "</textarea>")]
	resp, body := post(t, c, f.m, f.path("/fork"), url.Values{"yaml": {html.UnescapeString(text)}, "continue_trial": {itoa(tr.ID)}})
	id := createdID(t, resp, body)
	trials, _ := f.m.DB.Trials(t.Context(), id)
	if len(trials) != 1 || trials[0].LatestCheckpoint != tr.LatestCheckpoint || !strings.Contains(string(trials[0].Hparams), `"lr": 0.03`) {
		t.Fatalf("the continued trial: %+v", trials)
	}
}

func TestForkWithAnEditedConfig(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	cfg := "name: forked\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"

	// Mistakes come back beside the editor with what was typed.
	for name, tc := range map[string]struct {
		form    url.Values
		field   string
		message string
	}{
		"a bad config":                    {url.Values{"yaml": {"entrypoint: sleep 1\nsearcher: {name: single, metrc: loss}\n"}}, "yaml", "metrc"},
		"a trial of another":              {url.Values{"yaml": {cfg}, "continue_trial": {"999"}}, "continue_trial", "continue_trial: trial 999 is not a trial of experiment"},
		"a trial id that is not a number": {url.Values{"yaml": {cfg}, "continue_trial": {"x"}}, "continue_trial", `continue_trial: expected a trial id, got &#34;x&#34;`},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := post(t, c, f.m, f.path("/fork"), tc.form)
			if resp.StatusCode != 422 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			wants(t, "the refusal", body, `id="e-`+tc.field+`"`, tc.message, `id="fork-form"`)
		})
	}

	resp, body := post(t, c, f.m, f.path("/fork"), url.Values{"yaml": {cfg + "labels: [fork]\n"}, "continue_trial": {itoa(f.trials[3].ID)}})
	id := createdID(t, resp, body)
	fork, err := f.m.DB.Experiment(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if fork.Name != "forked" || fork.ParentID == nil || *fork.ParentID != f.e.ID {
		t.Fatalf("fork %q parent %v", fork.Name, fork.ParentID)
	}
	trials, _ := f.m.DB.Trials(t.Context(), id)
	if len(trials) != 1 || trials[0].LatestCheckpoint != f.trials[3].LatestCheckpoint {
		t.Fatalf("the fork's trial starts from %+v, want checkpoint %s", trials, f.trials[3].LatestCheckpoint)
	}
	f.m.Experiments.SetState(t.Context(), authz.System, id, "kill")
	_, body = get(t, c, f.m, "/experiments/"+itoa(id))
	wants(t, "the fork's page", body, "Forked from", `href="/experiments/`+itoa(f.e.ID)+`"`)
	if resp, _ := get(t, c, f.m, "/experiments/"+itoa(id)); resp.StatusCode != http.StatusOK {
		t.Fatalf("fork page: %d", resp.StatusCode)
	}
}

func TestATrialPageChartsEveryGroupItReportedAndDownloadsItsLog(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[0]
	_, body := get(t, c, f.m, "/trials/"+itoa(tr.ID))
	wants(t, "the trial page", body, `id="allocations"`, `data-groups="training validation"`)
	_, body = get(t, c, f.m, "/trials/"+itoa(tr.ID)+"?tab=logs")
	wants(t, "the trial's logs tab", body, `id="trial-log-lines"`, `id="trial-log-download"`)
	if err := f.m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{{TrialID: tr.ID, StepsCompleted: 10, Group: "system",
		Metrics: json.RawMessage(`{"avg_metrics": {"cpu_util": 0.5}}`)}}); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, c, f.m, "/trials/"+itoa(tr.ID))
	wants(t, "the trial page", body, `data-groups="training validation system"`)

	resp, body := get(t, c, f.m, "/trials/"+itoa(tr.ID)+"/logs/download?level=ERROR")
	if resp.StatusCode != 200 || strings.Count(body, "\n") != 1 || !strings.Contains(body, "ERROR trial 0 <b>fails</b>") {
		t.Fatalf("download: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := get(t, c, f.m, "/trials/"+itoa(tr.ID)+"/logs/download?level=LOUD"); resp.StatusCode != 400 {
		t.Fatalf("a bad level: %d", resp.StatusCode)
	}
}
