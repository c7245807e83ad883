package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAnExperimentIsCreatedFromPastedYAMLAndFiles pastes a config, sees its
// mistake named by key path before submitting, uploads the code as files,
// and watches the run finish and its chart switch metrics without a reload.
func TestAnExperimentIsCreatedFromPastedYAMLAndFiles(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/experiments/new")
	must(t, err)

	config, err := os.ReadFile("../examples/core-api-stdlib/const.yaml")
	must(t, err)
	good := strings.Replace(string(config), "max_steps: 400", "max_steps: 100", 1)
	editor := page.Locator("#f-yaml")
	// A chosen config file lands in the editor, and its mistake is named
	// by its key path before any submit; so is one typed.
	typo := strings.Replace(good, "smaller_is_better: true", "smaller_is_better: maybe", 1)
	must(t, page.Locator("#f-config_file").SetInputFiles([]playwright.InputFile{{Name: "const.yaml", MimeType: "text/yaml", Buffer: []byte(typo)}}))
	must(t, expect(t, editor).ToHaveValue(typo))
	must(t, expect(t, page.Locator("#yaml-problems")).ToContainText("searcher.smaller_is_better"))
	must(t, editor.Fill(good))
	must(t, expect(t, page.Locator("#yaml-valid")).ToContainText("Valid"))
	must(t, editor.Fill(strings.Replace(good, "entrypoint:", "entrypont:", 1)))
	must(t, expect(t, page.Locator("#yaml-problems")).ToContainText("entrypont"))
	screenshot(t, page, "experiment-new-live-check")
	must(t, editor.Fill(good))
	must(t, expect(t, page.Locator("#yaml-valid")).ToContainText("Valid"))

	train, err := os.ReadFile("../examples/core-api-stdlib/train.py")
	must(t, err)
	must(t, page.Locator("#f-code_files").SetInputFiles([]playwright.InputFile{{Name: "train.py", MimeType: "text/x-python", Buffer: train}}))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create experiment"}).Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/experiments/\d+$`)))
	_, err = page.Evaluate("window.notReloaded = true")
	must(t, err)
	long := playwright.NewPlaywrightAssertions(90000)
	must(t, long.Locator(page.Locator("#experiment-header .tag.state")).ToHaveText("COMPLETED"))
	must(t, expect(t, page.Locator("#experiment-progress")).ToHaveAttribute("value", "100"))
	if still, _ := page.Evaluate("window.notReloaded === true"); still != true {
		t.Fatal("the page reloaded to show the run finish")
	}

	// The overview charts a panel per metric, the searcher's first.
	chart := page.Locator("#experiment-chart")
	panel := chart.Locator("figure.chart").First()
	must(t, expect(t, panel).ToHaveId("chart-validation-validation_loss"))
	must(t, expect(t, panel.Locator(".uplot canvas")).ToBeVisible())
	must(t, expect(t, chart.Locator("#chart-training-loss .uplot canvas")).ToBeVisible())
	must(t, expect(t, chart.Locator(".chart-legend")).ToContainText("Trial"))

	// Smoothing changes the value shown at the last point. (The chart
	// redraws when data arrives: read until set.)
	valueAt := func(sel string) string {
		for range 40 {
			box, _ := panel.Locator(".u-over").BoundingBox()
			if box != nil {
				page.Mouse().Move(0, 0)
				panel.Locator(".u-over").Hover(playwright.LocatorHoverOptions{Position: &playwright.Position{X: box.Width - 1, Y: box.Height / 2}})
				v, _ := panel.Locator(".chart-tip .tip-row " + sel).First().TextContent()
				if _, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(v), "~"), 64); err == nil {
					return v
				}
			}
			page.WaitForTimeout(250)
		}
		t.Fatal("the chart's tooltip shows no value at the last point")
		return ""
	}
	raw := valueAt(".tip-value")
	_, err = panel.Locator("select[data-smooth]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"0.9"}})
	must(t, err)
	smoothed := valueAt(".muted")
	for i := 0; i < 20 && strings.TrimPrefix(strings.TrimSpace(smoothed), "~") == raw; i++ {
		page.WaitForTimeout(250)
		smoothed = valueAt(".muted")
	}
	smoothed = strings.TrimPrefix(strings.TrimSpace(smoothed), "~")
	if smoothed == raw {
		t.Fatalf("smoothing 0.9 shows %s at the last point, as without it", raw)
	}
	screenshot(t, page, "experiment-overview")
}

// newBrowserFixture is a paused experiment whose trials reported as if
// they had run, with different hyperparameters.
func newBrowserFixture(t *testing.T) (*handlerstest.Master, resolute.Experiment, []resolute.Trial) {
	t.Helper()
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: plotted
labels: [baseline]
entrypoint: sleep 30
hyperparameters:
  lr: {type: log, base: 10, minval: -3, maxval: -1}
  opt: {type: categorical, vals: [sgd, adam, rmsprop]}
searcher: {name: single, metric: loss}
`})
	must(t, err)
	var trials []resolute.Trial
	for i := range 6 {
		hp := fmt.Sprintf(`{"lr": %g, "opt": %q}`, 0.001*float64(1+3*i), []string{"sgd", "adam", "rmsprop"}[i%3])
		tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100+i, resolute.StatePaused, []byte(hp), 1)
		must(t, err)
		loss := 0.2 + 0.1*float64(i%4)
		must(t, m.DB.SetTrialBestValidation(t.Context(), tr.ID, loss))
		must(t, m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{
			{TrialID: tr.ID, StepsCompleted: 10, Group: "validation", Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g}}`, loss+0.1))},
			{TrialID: tr.ID, StepsCompleted: 20, Group: "validation", Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g}}`, loss))},
		}))
		must(t, m.DB.InsertTaskLogs(t.Context(), []resolute.TaskLog{{TaskID: tr.TaskID(), AllocationID: tr.TaskID() + ".1", Time: time.Now(),
			Level: "INFO", Log: fmt.Sprintf("trial %d trains\n", i)}}))
		trials = append(trials, tr)
	}
	return m, e, trials
}

// TestNotesLabelsAndPlotsOnAnExperimentsPage edits notes and labels in
// place, looks at the hyperparameter plots, reaches the tabs with the
// keyboard, and reads every tab on a phone.
func TestNotesLabelsAndPlotsOnAnExperimentsPage(t *testing.T) {
	m, e, trials := newBrowserFixture(t)
	id := strconv.FormatInt(e.ID, 10)
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/experiments/" + id)
	must(t, err)
	_, err = page.Evaluate("window.notReloaded = true")
	must(t, err)
	var mu sync.Mutex
	var navigations []string // what loaded a whole page, should one come
	page.OnRequest(func(r playwright.Request) {
		if r.IsNavigationRequest() && r.Frame() == page.MainFrame() {
			mu.Lock()
			navigations = append(navigations, r.Method()+" "+r.URL())
			mu.Unlock()
		}
	})

	// Labels: add one with Enter, remove another with its button.
	labels := page.Locator("#label-list")
	must(t, expect(t, labels).ToContainText("baseline"))
	must(t, page.Locator("#f-label").Fill("promising"))
	must(t, page.Locator("#f-label").Press("Enter"))
	must(t, expect(t, labels).ToContainText("promising"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Remove label baseline"}).Click())
	must(t, expect(t, labels).Not().ToContainText("baseline"))
	// An empty label is refused beside the field.
	must(t, page.Locator("#f-label").Fill(" "))
	must(t, page.Locator("#f-label").Press("Enter"))
	must(t, expect(t, page.Locator("#e-label")).ToHaveText("label: must not be empty"))
	// A form a live update has just swapped in, which htmx has not processed
	// yet (it does when the swap settles), still adds in place.
	_, err = page.Evaluate(`() => { const f = document.getElementById("add-label"); f.replaceWith(f.cloneNode(true)); }`)
	must(t, err)
	must(t, page.Locator("#f-label").Fill("unprocessed"))
	must(t, page.Locator("#f-label").Press("Enter"))
	must(t, expect(t, labels).ToContainText("unprocessed"))
	if still, _ := page.Evaluate("window.notReloaded === true"); still != true {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("editing labels reloaded the page: %q", navigations)
	}
	// A poll of the live header (while the experiment may run) keeps them.
	page.WaitForTimeout(3500)
	must(t, expect(t, labels).ToContainText("promising"))
	stored, err := m.DB.Experiment(t.Context(), e.ID)
	must(t, err)
	if strings.Join(stored.Labels, ",") != "promising,unprocessed" {
		t.Fatalf("stored labels %v", stored.Labels)
	}

	// Scheduling: a refusal beside its field, then a save, in place.
	must(t, page.Locator("#experiment-scheduling summary").Click())
	must(t, page.Locator("#f-priority").Fill("100"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save scheduling"}).Click())
	must(t, expect(t, page.Locator("#e-priority")).ToContainText("priority: expected a whole number from 1 to 99"))
	must(t, page.Locator("#f-priority").Fill("7"))
	must(t, page.Locator("#f-max_slots").Fill("2"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save scheduling"}).Click())
	must(t, expect(t, page.Locator("#scheduling-summary")).ToHaveText("Scheduling: priority 7 · weight 1 · max slots 2"))
	must(t, expect(t, page.Locator("#experiment-scheduling")).ToContainText("a lower number runs first"))

	// The tabs are reached with the keyboard.
	must(t, page.Locator("#tab-overview").Focus())
	must(t, page.Keyboard().Press("Tab"))
	focused, err := page.Evaluate("document.activeElement.id")
	must(t, err)
	if focused != "tab-trials" {
		t.Fatalf("Tab from the overview's tab focuses %v", focused)
	}
	must(t, page.Keyboard().Press("Enter"))
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`\?tab=trials$`)))
	must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(len(trials)+1))

	// Notes: Markdown rendered, HTML kept as text.
	must(t, page.Locator("#tab-notes").Click())
	must(t, page.Locator("#notes-editor summary").Click())
	must(t, page.Locator("#f-notes").Fill("# Findings\n\n**adam** wins <img src=x onerror=\"window.pwned=1\">\n\n- lr 0.004"))
	_, err = page.Evaluate("window.notReloaded = true")
	must(t, err)
	must(t, page.Locator("#notes-save").Click())
	notes := page.Locator("#notes-rendered")
	must(t, expect(t, notes.Locator("h1")).ToHaveText("Findings"))
	must(t, expect(t, notes.Locator("strong")).ToHaveText("adam"))
	must(t, expect(t, notes).ToContainText(`<img src=x onerror="window.pwned=1">`))
	must(t, expect(t, notes.Locator("li")).ToHaveText("lr 0.004"))
	if pwned, _ := page.Evaluate("window.pwned === 1"); pwned == true {
		t.Fatal("the notes ran a script")
	}
	if still, _ := page.Evaluate("window.notReloaded === true"); still != true {
		t.Fatal("saving the notes reloaded the page")
	}
	screenshot(t, page, "experiment-notes")
	_, err = page.Reload()
	must(t, err)
	must(t, expect(t, page.Locator("#notes-rendered h1")).ToHaveText("Findings"))

	// The hyperparameters tab: parallel coordinates and a scatter per
	// hyperparameter; a line leads to its trial.
	must(t, page.Locator("#tab-hyperparameters").Click())
	must(t, expect(t, page.Locator("#parallel-coordinates polyline")).ToHaveCount(len(trials)))
	must(t, expect(t, page.Locator("#parallel-coordinates .axis-name")).ToHaveText([]string{"lr", "opt", "loss"}))
	must(t, expect(t, page.Locator("#hparam-scatters .uplot canvas")).ToHaveCount(2))
	must(t, expect(t, page.Locator("#scatter-opt .u-legend")).ToContainText("loss"))
	// lr is searched on a log scale: its axis is labelled by decades and
	// 2 and 5 times them; the metric's by round steps, not just its ends.
	must(t, expect(t, page.Locator(`#parallel-coordinates g[data-axis="0"] .tick`)).ToHaveText([]string{"0.001", "0.002", "0.005", "0.01"}))
	must(t, expect(t, page.Locator(`#parallel-coordinates g[data-axis="2"] .tick`)).ToHaveText([]string{"0.2", "0.3", "0.4", "0.5"}))
	brushParallel(t, page, len(trials))
	screenshot(t, page, "experiment-hyperparameters")
	line := page.Locator(`#parallel-coordinates a[data-trial="` + strconv.FormatInt(trials[2].ID, 10) + `"]`)
	must(t, expect(t, line).ToHaveAttribute("href", "/trials/"+strconv.FormatInt(trials[2].ID, 10)))
	must(t, line.DispatchEvent("click", nil))
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/trials/\d+$`)))

	// The logs tab shows every trial's lines, opens at their end and
	// follows new ones there, and filters them.
	var many []resolute.TaskLog
	for i := range 200 {
		many = append(many, resolute.TaskLog{TaskID: trials[0].TaskID(), AllocationID: trials[0].TaskID() + ".1", Time: time.Now(), Level: "DEBUG", Log: fmt.Sprintf("step %d\n", i)})
	}
	must(t, m.DB.InsertTaskLogs(t.Context(), many))
	_, err = page.Goto(m.URL + "/experiments/" + id + "?tab=logs")
	must(t, err)
	logLines := page.Locator("#experiment-log-lines")
	must(t, expect(t, logLines).ToContainText("trial 5 trains"))
	atEnd := func() bool {
		v, err := logLines.Evaluate("l => l.scrollHeight > l.clientHeight && l.scrollTop + l.clientHeight >= l.scrollHeight - 8", nil)
		must(t, err)
		return v == true
	}
	if !atEnd() {
		t.Fatal("the log does not open at its end")
	}
	must(t, m.DB.InsertTaskLogs(t.Context(), []resolute.TaskLog{{TaskID: trials[3].TaskID(), AllocationID: trials[3].TaskID() + ".1", Time: time.Now(), Level: "INFO", Log: "the newest line\n"}}))
	must(t, expect(t, logLines).ToContainText("the newest line"))
	if !atEnd() {
		t.Fatal("the log does not follow a new line at its end")
	}
	must(t, page.Locator("#f-search").Fill("trial 2"))
	must(t, page.Locator("#log-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
	must(t, expect(t, page.Locator("#experiment-log-lines > span")).ToHaveCount(1))

	// A fork with an edited config, checked as it is typed.
	must(t, page.Locator("#tab-configuration").Click())
	fork := page.Locator("#fork-form #f-yaml")
	text, err := fork.InputValue()
	must(t, err)
	must(t, fork.Fill(strings.Replace(text, "name: plotted", "name: plotted\nmax_restarts: -1", 1)))
	must(t, expect(t, page.Locator("#yaml-problems")).ToContainText("max_restarts"))
	must(t, fork.Fill(strings.Replace(text, "name: plotted", "name: plotted-again", 1)))
	must(t, expect(t, page.Locator("#yaml-valid")).ToContainText("plotted-again"))
	_, err = page.Locator("#f-continue_trial").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	must(t, err)
	must(t, page.Locator("#fork-submit").Click())
	must(t, expect(t, page.Locator("#experiment-header h1")).ToContainText("plotted-again"))
	must(t, expect(t, page.Locator("#experiment-header")).ToContainText("Forked from"))

	// Every tab reads on a phone without scrolling sideways.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, tab := range []string{"", "?tab=trials", "?tab=hyperparameters", "?tab=checkpoints", "?tab=configuration", "?tab=logs", "?tab=notes"} {
		_, err := phone.Goto(m.URL + "/experiments/" + id + tab)
		must(t, err)
		must(t, expect(t, phone.Locator("#experiment-tabs")).ToBeVisible())
		noWiderThan(t, phone, 390)
		if tab == "?tab=hyperparameters" {
			// The whole plot, the metric's axis too, fits the phone, and
			// brushes by touch as by mouse.
			box, err := phone.Locator("#parallel-coordinates svg").BoundingBox()
			must(t, err)
			if box.X+box.Width > 390 {
				t.Errorf("the parallel coordinates end at %.0f px on a 390 px screen", box.X+box.Width)
			}
			brushParallel(t, phone, len(trials))
		}
		screenshot(t, phone, "phone-experiment"+strings.ReplaceAll(tab, "?tab=", "-"))
	}
}

// brushParallel drags along the metric's axis (loss: 0.2 at the bottom,
// 0.5 at the top) of the fixture's parallel coordinates from below its
// bottom to half way up: the four trials at 0.2 and 0.3 stay, in the plot
// and in the table; a click on the axis clears the brush.
func brushParallel(t *testing.T, page playwright.Page, trials int) {
	t.Helper()
	// (A vertical line has no width, which Playwright's BoundingBox
	// waits out: ask the page.)
	r, err := page.Evaluate(`(() => {
		document.querySelector("#parallel-coordinates").scrollIntoView({block: "center"});
		const r = document.querySelector('#parallel-coordinates g[data-axis="2"] line').getBoundingClientRect();
		return [r.x, r.y, r.height].map(String);
	})()`)
	must(t, err)
	var f [3]float64
	for i, v := range r.([]any) {
		f[i], err = strconv.ParseFloat(v.(string), 64)
		must(t, err)
	}
	axis := struct{ Y, Height float64 }{f[1], f[2]}
	x := f[0]
	must(t, page.Mouse().Move(x, axis.Y+axis.Height+4))
	must(t, page.Mouse().Down())
	must(t, page.Mouse().Move(x, axis.Y+axis.Height*0.5, playwright.MouseMoveOptions{Steps: playwright.Int(6)}))
	must(t, page.Mouse().Up())
	svg := page.Locator("#parallel-coordinates svg")
	must(t, expect(t, svg).ToHaveAttribute("data-selected", "4"))
	must(t, expect(t, svg.Locator("a.dim")).ToHaveCount(trials-4))
	must(t, expect(t, page.Locator("#hparam-trials tbody tr:visible")).ToHaveCount(4))
	must(t, expect(t, page.Locator("#brush-count")).ToHaveText(fmt.Sprintf("4 of %d trials in the brushed ranges", trials)))
	for _, loss := range []string{"0.4", "0.5"} {
		must(t, expect(t, page.Locator("#hparam-trials tbody tr:visible td:last-child").GetByText(loss, playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})).ToHaveCount(0))
	}
	screenshot(t, page, fmt.Sprintf("parallel-brushed-%d", int(page.ViewportSize().Width)))
	must(t, page.Mouse().Click(x, axis.Y+axis.Height*0.25))
	must(t, expect(t, page.Locator("#hparam-trials tbody tr:visible")).ToHaveCount(trials))
	must(t, expect(t, svg.Locator("a.dim")).ToHaveCount(0))
}
