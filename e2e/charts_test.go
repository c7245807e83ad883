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

// TestMetricChartsAreAGridOfPanels reports metrics for twelve trials of a
// paused experiment (as trials would: a validation loss on a narrow range,
// a batches count on a wide one, a training loss) and reads their charts
// as a person would: a panel per metric with its own y axis, ticks that
// read apart, a tooltip with the API's numbers, a folding legend, points
// appended live, drag to zoom; at 1440 and 390 px.
func TestMetricChartsAreAGridOfPanels(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: charted\nentrypoint: sleep 30\nsearcher: {name: single, metric: validation_loss}\n"})
	must(t, err)
	// lossAt is trial i's validation loss at a step: 0.0100..0.0108, with
	// digits past the third.
	lossAt := func(i int, step int64) float64 {
		return 0.01 + 0.0008*float64(step)/50*float64(i+1)/12 + 1.234567e-9*float64(i+1)
	}
	var trials []resolute.Trial
	var reports []resolute.MetricsReport
	for i := range 12 {
		tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100+i, resolute.StateActive, []byte("{}"), 1)
		must(t, err)
		trials = append(trials, tr)
		for step := int64(10); step <= 50; step += 10 {
			loss := lossAt(i, step)
			reports = append(reports,
				resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "validation",
					Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"validation_loss": %s, "batches": %d, "epochs": %g}}`, strconv.FormatFloat(loss, 'g', -1, 64), step*8, float64(step)/20))},
				resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "training",
					Metrics: json.RawMessage(`{"avg_metrics": {"loss": 9}}`)})
		}
	}
	must(t, m.DB.InsertMetrics(t.Context(), reports))

	page := browser.NewPage(t, 1440)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	// The experiment's page: a panel per metric, the searcher's first,
	// each named by the metric alone.
	_, err = page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10))
	must(t, err)
	grid := page.Locator("#experiment-chart")
	loss := grid.Locator("#chart-validation-validation_loss")
	batches := grid.Locator("#chart-validation-batches")
	must(t, expect(t, grid.Locator("figure.chart").First()).ToHaveId("chart-validation-validation_loss"))
	must(t, expect(t, grid.Locator("figure.chart")).ToHaveCount(4))
	must(t, expect(t, loss.Locator(".chart-title")).ToHaveText("validation_loss"))
	must(t, expect(t, loss.Locator(".uplot canvas")).ToBeVisible())
	must(t, expect(t, batches.Locator(".uplot canvas")).ToBeVisible())

	// Each panel has its own y axis: the loss's ticks read apart on its
	// narrow range; the batches' reach the hundreds.
	lossTicks := yTicks(t, loss)
	if len(lossTicks) < 3 || lossTicks[0] < 0.0099 || lossTicks[len(lossTicks)-1] > 0.0110 {
		t.Errorf("validation_loss ticks %v: want three or more within 0.0099..0.0110", lossTicks)
	}
	if bt := yTicks(t, batches); bt[len(bt)-1] < 300 {
		t.Errorf("batches ticks %v: want its own range, up to 400", bt)
	}

	// The tooltip at the last batch lists every trial's value at full
	// precision, as the API serves it, largest first.
	api, err := page.Evaluate(`async () => {
		const b = await (await fetch("/api/v1/experiments/` + strconv.FormatInt(e.ID, 10) + `/metrics?group=validation&metric=validation_loss", { headers: { Accept: "application/json" } })).json();
		return b.trials.map((t) => String(t.points[t.points.length - 1].value)).sort((a, b) => Number(b) - Number(a));
	}`)
	must(t, err)
	want := make([]string, 0, 12)
	for _, v := range api.([]any) {
		want = append(want, v.(string))
	}
	got := tooltipAt(t, page, loss, 1, 0.5, len(want))
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the tooltip reads %v, the API %v", got, want)
	}
	if want[0] != strconv.FormatFloat(lossAt(11, 50), 'g', -1, 64) {
		t.Errorf("the API's largest last loss is %s", want[0])
	}
	must(t, expect(t, loss.Locator(".chart-tip .tip-row.on")).ToHaveCount(1))
	keepScreenshot(t, page, "charts-grid")

	// Twelve trials fold the legend; its filter narrows every panel.
	legend := grid.Locator(".chart-legend")
	must(t, expect(t, legend.Locator("details summary")).ToHaveText("12 trials · filter"))
	must(t, legend.Locator("summary").Click())
	must(t, legend.Locator("input[type=search]").Fill(strconv.FormatInt(trials[3].ID, 10)))
	must(t, expect(t, legend.Locator("li:visible")).ToHaveCount(1))
	if got := tooltipAt(t, page, loss, 1, 0.5, 1); len(got) != 1 {
		t.Errorf("filtered to one trial, the tooltip lists %v", got)
	}
	must(t, legend.Locator("input[type=search]").Fill(""))

	// The reports name their epochs: the x axis can be epochs.
	_, err = grid.Locator("select[data-xaxis]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"epochs"}})
	must(t, err)
	tooltipAt(t, page, loss, 1, 0.5, len(want))
	must(t, expect(t, loss.Locator(".chart-tip .tip-head")).ToHaveText("Epochs 2.5"))
	_, err = grid.Locator("select[data-xaxis]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"batches"}})
	must(t, err)

	// A trial's page: a panel per metric name, training and validation
	// together; new reports are appended (only the points past the last,
	// after_step=50, are fetched).
	_, err = page.Goto(m.URL + "/trials/" + strconv.FormatInt(trials[0].ID, 10))
	must(t, err)
	tgrid := page.Locator("#trial-charts")
	must(t, expect(t, tgrid.Locator("figure.chart")).ToHaveCount(4))
	must(t, expect(t, tgrid.Locator("figure.chart").First()).ToHaveId("chart-validation_loss"))
	tloss := tgrid.Locator("#chart-validation_loss")
	must(t, expect(t, tloss.Locator(".uplot canvas")).ToBeVisible())
	appended := make(chan string, 10)
	page.OnRequest(func(r playwright.Request) {
		if strings.Contains(r.URL(), "/metrics?") && strings.Contains(r.URL(), "after_step=50") && strings.Contains(r.URL(), "group=validation") {
			appended <- r.URL()
		}
	})
	must(t, m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{{TrialID: trials[0].ID, StepsCompleted: 60, Group: "validation",
		Metrics: json.RawMessage(`{"avg_metrics": {"validation_loss": 0.0107654321, "batches": 480}}`)}}))
	must(t, expect(t, tloss).ToHaveAttribute("data-points", "6"))
	if got := tooltipAt(t, page, tloss, 1, 0.5, 1); len(got) != 1 || got[0] != "0.0107654321" {
		t.Errorf("after the live report the tooltip reads %v", got)
	}
	select {
	case <-appended:
	default:
		t.Error("the chart did not fetch only the points after its last (after_step=50)")
	}
	keepScreenshot(t, page, "trial-charts")

	// Dragging across a panel zooms into those batches and fetches them in
	// detail; a double-click zooms back out.
	zoomed := make(chan string, 8)
	page.OnRequest(func(r playwright.Request) {
		if strings.Contains(r.URL(), "min_batches=") {
			select {
			case zoomed <- r.URL():
			default:
			}
		}
	})
	box, err := tloss.Locator(".u-over").BoundingBox()
	must(t, err)
	must(t, page.Mouse().Move(box.X+box.Width*0.4, box.Y+box.Height/2))
	must(t, page.Mouse().Down())
	must(t, page.Mouse().Move(box.X+box.Width*0.8, box.Y+box.Height/2, playwright.MouseMoveOptions{Steps: playwright.Int(5)}))
	must(t, page.Mouse().Up())
	must(t, expect(t, tgrid).ToHaveAttribute("data-zoom", regexp.MustCompile(`^\d+-\d+$`)))
	select {
	case u := <-zoomed:
		if !strings.Contains(u, "max_batches=") {
			t.Errorf("the zoomed fetch %s names no end", u)
		}
	case <-time.After(10 * time.Second):
		t.Error("zooming fetched nothing")
	}
	must(t, tloss.Locator(".u-over").Dblclick())
	must(t, expect(t, tgrid).Not().ToHaveAttribute("data-zoom", regexp.MustCompile(`.`)))

	// On a phone the panels fit the screen, one under another.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, path := range []string{"/trials/" + strconv.FormatInt(trials[0].ID, 10), "/experiments/" + strconv.FormatInt(e.ID, 10)} {
		_, err = phone.Goto(m.URL + path)
		must(t, err)
		must(t, expect(t, phone.Locator(".uplot canvas").First()).ToBeVisible())
		noWiderThan(t, phone, 390)
	}
	// (Trial 0 reported at step 60 since; step 50 is four fifths across.)
	ploss := phone.Locator("#chart-validation-validation_loss")
	if got := tooltipAt(t, phone, ploss, 0.8, 0.5, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("on a phone the tooltip reads %v, the API %v", got, want)
	}
	keepScreenshot(t, phone, "phone-charts-grid")
}

// yTicks are the y axis's tick labels of a panel as drawn, parsed; it
// fails unless they are distinct.
func yTicks(t *testing.T, panel playwright.Locator) []float64 {
	t.Helper()
	must(t, expect(t, panel).ToHaveAttribute("data-y-ticks", regexp.MustCompile(`\d`)))
	s, err := panel.GetAttribute("data-y-ticks")
	must(t, err)
	seen := map[string]bool{}
	var out []float64
	for _, f := range strings.Fields(s) {
		if seen[f] {
			t.Errorf("the ticks %q repeat %s", s, f)
		}
		seen[f] = true
		v, err := strconv.ParseFloat(f, 64)
		must(t, err)
		out = append(out, v)
	}
	return out
}

// tooltipAt hovers a panel at a fraction of its width and height until
// its tooltip lists n values (charts redraw as data arrives), and returns
// them.
func tooltipAt(t *testing.T, page playwright.Page, panel playwright.Locator, x, y float64, n int) []string {
	t.Helper()
	var got []string
	for range 30 {
		must(t, page.Mouse().Move(0, 0))
		box, err := panel.Locator(".u-over").BoundingBox()
		must(t, err)
		must(t, panel.Locator(".u-over").Hover(playwright.LocatorHoverOptions{Position: &playwright.Position{X: min(box.Width*x, box.Width-1), Y: box.Height * y}}))
		got, err = panel.Locator(".chart-tip .tip-value").AllTextContents()
		must(t, err)
		if len(got) == n {
			return got
		}
		page.WaitForTimeout(500)
	}
	return got
}
