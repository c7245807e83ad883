package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestATrialsPageIsInTabs clicks through a running trial's tabs at 1440
// and 390 px: each is its own URL, the page is a screen or so, not one long
// scroll, the checkpoints come a page at a time, the system tab appears
// with system metrics, and the overview still follows new reports live.
func TestATrialsPageIsInTabs(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: tabbed\nentrypoint: sleep 30\nsearcher: {name: single, metric: validation_loss}\nhyperparameters: {lr: 0.01, layers: 3}\n"})
	must(t, err)
	tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100, resolute.StateActive, []byte(`{"lr": 0.01, "layers": 3}`), 1)
	must(t, err)
	var reports []resolute.MetricsReport
	for step := int64(1); step <= 54; step++ {
		reports = append(reports,
			resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step * 10, Group: "validation",
				Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"validation_loss": %g}}`, 1/float64(step)))},
			resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step * 10, Group: "training",
				Metrics: json.RawMessage(`{"avg_metrics": {"loss": 2}}`)})
		must(t, m.DB.CreateCheckpoint(t.Context(), resolute.Checkpoint{UUID: fmt.Sprintf("00000%03d-0000-4000-8000-000000000000", step), TrialID: tr.ID,
			ExperimentID: e.ID, AllocationID: tr.TaskID() + ".1", TaskID: tr.TaskID(), StepsCompleted: step * 10, State: "COMPLETED",
			Resources: map[string]int64{"state": 4096}, Size: 4096, Metadata: json.RawMessage(`{}`)}))
	}
	must(t, m.DB.InsertMetrics(t.Context(), reports))
	_, err = m.DB.SetRunMetadata(t.Context(), tr.ID, json.RawMessage(`{"dataset": "digits"}`))
	must(t, err)
	base := m.URL + "/trials/" + strconv.FormatInt(tr.ID, 10)
	tab := func(page playwright.Page, key string) {
		t.Helper()
		must(t, page.Locator("#tab-"+key).Click())
		must(t, expect(t, page.Locator("#tab-"+key)).ToHaveAttribute("aria-current", "page"))
	}
	url := func(page playwright.Page, re string) {
		t.Helper()
		must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(re)))
	}

	for round, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
		_, err = page.Goto(base)
		must(t, err)

		// The overview: charts and the latest reports, not all of them.
		must(t, expect(t, page.Locator("#tab-overview")).ToHaveAttribute("aria-current", "page"))
		loss := page.Locator("#chart-validation_loss")
		must(t, expect(t, loss.Locator(".uplot canvas")).ToBeVisible())
		must(t, expect(t, page.Locator("#validation-metrics tbody tr")).ToHaveCount(10))
		must(t, expect(t, page.Locator("#checkpoints")).ToHaveCount(0))
		if width == 1440 { // the 390 px round comes after system metrics
			must(t, expect(t, page.Locator("#tab-system")).ToHaveCount(0))
		}
		height, err := page.Evaluate("document.documentElement.scrollHeight")
		must(t, err)
		if h := toInt(height); h > 3000 {
			t.Errorf("at %d px the overview is %d px tall; want it short of the old page's 6,460", width, h)
		}
		keepScreenshot(t, page, fmt.Sprintf("trial-tabs-overview-%d", width))

		// A new report reaches the overview without a reload: the charts
		// and the latest-reports table both follow it.
		_, err = page.Evaluate("window.notReloaded = true")
		must(t, err)
		points, err := loss.GetAttribute("data-points")
		must(t, err)
		must(t, m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{{TrialID: tr.ID, StepsCompleted: 600 + 10*int64(round), Group: "validation",
			Metrics: json.RawMessage(`{"avg_metrics": {"validation_loss": 0.0123456}}`)}}))
		must(t, expect(t, page.Locator("#validation-metrics tbody")).ToContainText("0.0123456"))
		must(t, expect(t, page.Locator("#validation-metrics tbody tr")).ToHaveCount(10))
		must(t, expect(t, loss).Not().ToHaveAttribute("data-points", points))
		still, err := page.Evaluate("window.notReloaded === true")
		must(t, err)
		if still != true {
			t.Fatal("the overview reloaded to show a new report")
		}

		tab(page, "hyperparameters")
		url(page, `\?tab=hyperparameters$`)
		must(t, expect(t, page.Locator("#hparams")).ToContainText("layers"))

		// Checkpoints: twenty a page, the latest first, and the next page.
		tab(page, "checkpoints")
		url(page, `\?tab=checkpoints$`)
		must(t, expect(t, page.Locator("#checkpoints tbody tr")).ToHaveCount(20))
		must(t, expect(t, page.Locator("#checkpoints tbody tr").First()).ToContainText("540"))
		must(t, expect(t, page.Locator("#checkpoint-range")).ToHaveText("1–20 of 54"))
		keepScreenshot(t, page, fmt.Sprintf("trial-tabs-checkpoints-%d", width))
		must(t, page.Locator("#checkpoints-older").Click())
		url(page, `\?tab=checkpoints&page=2$`)
		must(t, expect(t, page.Locator("#checkpoint-range")).ToHaveText("21–40 of 54"))
		must(t, expect(t, page.Locator("#checkpoints tbody tr").First()).ToContainText("340"))

		tab(page, "logs")
		url(page, `\?tab=logs$`)
		must(t, expect(t, page.Locator("#trial-log-empty")).ToHaveText("No output yet."))
		must(t, page.Locator("#f-search").Fill("nothing"))
		must(t, page.Locator("#log-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
		url(page, `\?tab=logs&level=&search=nothing#logs$`)
		must(t, expect(t, page.Locator("#trial-log-empty")).ToContainText(`"nothing"`))

		tab(page, "metadata")
		must(t, expect(t, page.Locator("#run-metadata")).ToContainText(`"dataset": "digits"`))
		noWiderThan(t, page, width)

		// System metrics bring their tab.
		_, err = m.DB.InsertSystemMetrics(t.Context(), []resolute.SystemMetricsReport{{TrialID: tr.ID, TrialRunID: 1, Group: "cpu", AgentID: "agent-1",
			ReportedAt: time.Now(), Metrics: json.RawMessage(`{"cpu_util_simple": 50}`)}})
		must(t, err)
		_, err = page.Reload()
		must(t, err)
		tab(page, "system")
		must(t, expect(t, page.Locator("#system-cpu .uplot canvas")).ToBeVisible())
		tab(page, "overview")
		url(page, `/trials/\d+$`)
		must(t, expect(t, loss.Locator(".uplot canvas")).ToBeVisible())
	}
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return -1
}

// TestTheTrialsTabHidesSharedHyperparameters reads an experiment's trials
// tab at 1440 and 390 px: the hyperparameter every trial shares is named
// above the table, not a column, until asked for; a trial that stopped for
// invalid hyperparameters says so; the phone scrolls only the table.
func TestTheTrialsTabHidesSharedHyperparameters(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: shared
entrypoint: sleep 30
hyperparameters:
  lr: {type: double, minval: 0.001, maxval: 0.1}
  batch: 32
searcher: {name: random, metric: loss, max_trials: 3, max_length: 10}
`})
	must(t, err)
	trials, err := m.DB.Trials(t.Context(), e.ID)
	must(t, err)
	must(t, m.DB.SetTrialEarlyExit(t.Context(), trials[1].ID, "EXITED_REASON_INVALID_HP"))
	must(t, m.DB.SetTrialState(t.Context(), trials[1].ID, resolute.StateCompleted))

	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
		_, err = page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10))
		must(t, err)
		must(t, page.Locator("#tab-trials").Click())
		table := page.Locator("#trials")
		must(t, expect(t, page.Locator("#constant-hparams")).ToContainText("batch=32"))
		must(t, expect(t, table.Locator("thead")).ToContainText("Duration"))
		must(t, expect(t, table.Locator("thead")).Not().ToContainText("batch"))
		must(t, expect(t, page.Locator("#trials-"+strconv.FormatInt(trials[1].ID, 10))).ToContainText("stopped: invalid hyperparameters"))
		noWiderThan(t, page, width)
		keepScreenshot(t, page, fmt.Sprintf("experiment-trials-table-%d", width))
		must(t, page.Locator("#show-constant").Click())
		must(t, expect(t, table.Locator("thead")).ToContainText("batch"))
		must(t, page.Locator("#hide-constant").Click())
		must(t, expect(t, table.Locator("thead")).Not().ToContainText("batch"))
	}
}
