package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestMetricChartsDrawHoverAndSwitchMetrics reports metrics for two trials
// of a paused experiment (as trials would) and looks at their charts.
func TestMetricChartsDrawHoverAndSwitchMetrics(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: charted\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	must(t, err)
	var trials []resolute.Trial
	var reports []resolute.MetricsReport
	for i := range 2 {
		tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100+i, resolute.StateActive, []byte("{}"), 1)
		must(t, err)
		trials = append(trials, tr)
		for step := int64(10); step <= 50; step += 10 {
			reports = append(reports,
				resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "validation",
					Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g, "accuracy": 0.5}}`, float64(i+1)/float64(step)))},
				resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "training",
					Metrics: json.RawMessage(`{"avg_metrics": {"loss": 9}}`)})
		}
	}
	must(t, m.DB.InsertMetrics(t.Context(), reports))

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	// A trial's page: a chart per group, values in the legend on hover.
	_, err = page.Goto(m.URL + "/trials/" + strconv.FormatInt(trials[0].ID, 10))
	must(t, err)
	validation := page.Locator("#chart-validation")
	must(t, expect(t, validation.Locator(".uplot canvas")).ToBeVisible())
	must(t, expect(t, page.Locator("#chart-training .uplot canvas")).ToBeVisible())
	must(t, expect(t, validation.Locator(".u-legend")).ToContainText("accuracy"))
	must(t, validation.Locator(".u-over").Hover())
	must(t, expect(t, validation.Locator(".u-legend .u-series").Nth(1).Locator(".u-value")).ToHaveText("0.5"))
	screenshot(t, page, "trial-charts")
	must(t, page.Locator("#log-validation").Check())
	must(t, expect(t, validation.Locator(".uplot canvas")).ToBeVisible())

	// While the trial runs, new reports join its chart: told of trial:<id>,
	// it fetches only the points past its last (after_step=50) and appends
	// them, within a second or so.
	appended := make(chan string, 10)
	page.OnRequest(func(r playwright.Request) {
		if strings.Contains(r.URL(), "/metrics?") && strings.Contains(r.URL(), "after_step=50") && strings.Contains(r.URL(), "group=validation") {
			appended <- r.URL()
		}
	})
	reported := time.Now()
	must(t, m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{{TrialID: trials[0].ID, StepsCompleted: 60, Group: "validation",
		Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.01, "accuracy": 0.75}}`)}}))
	box, err := validation.Locator(".u-over").BoundingBox()
	must(t, err)
	hoverUntil(t, page, validation, "0.75", &playwright.Position{X: box.Width - 1, Y: 10})
	must(t, expect(t, validation.Locator(".u-legend .u-series").Nth(1).Locator(".u-value")).ToHaveText("0.75"))
	select {
	case <-appended:
		t.Logf("the new point was fetched after %s", time.Since(reported))
	default:
		t.Error("the chart did not fetch only the points after its last (after_step=50)")
	}

	// The experiment's page: the searcher's metric of every trial, a picker
	// for the others, and a legend entry opens its trial.
	_, err = page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10))
	must(t, err)
	chart := page.Locator("#experiment-chart")
	must(t, expect(t, chart.Locator(".uplot canvas")).ToBeVisible())
	must(t, expect(t, page.Locator("#chart-metric")).ToHaveValue("validation/loss"))
	must(t, expect(t, chart.Locator(".u-legend")).ToContainText("Trial "+strconv.FormatInt(trials[1].ID, 10)))
	screenshot(t, page, "experiment-chart")
	_, err = page.Locator("#chart-metric").SelectOption(playwright.SelectOptionValues{Values: &[]string{"training/loss"}})
	must(t, err)
	// The new metric's series arrive after a fetch that redraws the chart
	// and clears the legend: hover again until the value shows.
	hoverUntil(t, page, chart, "9", nil)
	must(t, expect(t, chart.Locator(".u-legend .u-series").Nth(1).Locator(".u-value")).ToHaveText("9"))
	// Clicking a line opens its trial (the lines lie on one another here).
	must(t, chart.Locator(".u-over").Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/trials/\d+$`)))
	_, err = page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10))
	must(t, err)
	must(t, chart.Locator(".u-legend").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Trial " + strconv.FormatInt(trials[1].ID, 10)}).Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/trials/`+strconv.FormatInt(trials[1].ID, 10)+`$`)))

	// Dragging across the chart zooms into those batches and fetches them in
	// detail; a double-click zooms back out. (On a trial's page: a click
	// on the experiment's chart opens a trial.)
	_, err = page.Goto(m.URL + "/trials/" + strconv.FormatInt(trials[0].ID, 10))
	must(t, err)
	chart = page.Locator("#chart-validation")
	must(t, expect(t, chart.Locator(".uplot canvas")).ToBeVisible())
	zoomed := make(chan string, 8)
	page.OnRequest(func(r playwright.Request) {
		if strings.Contains(r.URL(), "min_batches=") {
			select {
			case zoomed <- r.URL():
			default:
			}
		}
	})
	box, err = chart.Locator(".u-over").BoundingBox()
	must(t, err)
	must(t, page.Mouse().Move(box.X+box.Width*0.4, box.Y+box.Height/2))
	must(t, page.Mouse().Down())
	must(t, page.Mouse().Move(box.X+box.Width*0.8, box.Y+box.Height/2, playwright.MouseMoveOptions{Steps: playwright.Int(5)}))
	must(t, page.Mouse().Up())
	must(t, expect(t, chart).ToHaveAttribute("data-zoom", regexp.MustCompile(`^\d+-\d+$`)))
	select {
	case u := <-zoomed:
		if !strings.Contains(u, "max_batches=") {
			t.Errorf("the zoomed fetch %s names no end", u)
		}
	case <-time.After(10 * time.Second):
		t.Error("zooming fetched nothing")
	}
	must(t, chart.Locator(".u-over").Dblclick())
	must(t, expect(t, chart).Not().ToHaveAttribute("data-zoom", regexp.MustCompile(`.`)))

	// On a phone the charts fit the screen.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, path := range []string{"/trials/" + strconv.FormatInt(trials[0].ID, 10), "/experiments/" + strconv.FormatInt(e.ID, 10)} {
		_, err = phone.Goto(m.URL + path)
		must(t, err)
		must(t, expect(t, phone.Locator(".uplot canvas").First()).ToBeVisible())
		noWiderThan(t, phone, 390)
	}
	screenshot(t, phone, "phone-experiment-chart")
}

// hoverUntil moves the pointer over chart (at pos, or its middle) until the
// legend's first series shows want, for up to 15 s: charts redraw when
// their data arrives, which resets the legend.
func hoverUntil(t *testing.T, page playwright.Page, chart playwright.Locator, want string, pos *playwright.Position) {
	t.Helper()
	for range 30 {
		// Leave and come back, so that the chart sees the pointer move.
		must(t, page.Mouse().Move(0, 0))
		must(t, chart.Locator(".u-over").Hover(playwright.LocatorHoverOptions{Position: pos}))
		if v, _ := chart.Locator(".u-legend .u-series").Nth(1).Locator(".u-value").TextContent(); v == want {
			return
		}
		page.WaitForTimeout(500)
	}
}
