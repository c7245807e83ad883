package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// tableExperiment is a paused experiment with more trials than a page of
// the trials tab: lr varies, batch is the same for all; every trial but
// the last ten has a best validation loss and reported it with a time
// and epochs, so that every tab and chart has something to show.
func tableExperiment(t *testing.T, m *handlerstest.Master, n int) (resolute.Experiment, []resolute.Trial) {
	t.Helper()
	ctx := t.Context()
	admin, err := m.DB.UserByUsername(ctx, "admin")
	must(t, err)
	e, err := m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: tabled
entrypoint: sleep 30
hyperparameters:
  lr: {type: log, base: 10, minval: -4, maxval: -1}
  batch: 32
searcher: {name: single, metric: loss}
`})
	must(t, err)
	var reports []resolute.MetricsReport
	for i := range n {
		tr, err := m.DB.CreateTrial(ctx, e.ID, 100+i, resolute.StatePaused, fmt.Appendf(nil, `{"lr": %g, "batch": 32}`, 0.0001*float64(i+1)), 1)
		must(t, err)
		if i < n-10 {
			loss := 1 + float64((i*37)%n)/10
			must(t, m.DB.SetTrialBestValidation(ctx, tr.ID, loss))
			for step := int64(10); step <= 30; step += 10 {
				reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "validation",
					Metrics: fmt.Appendf(nil, `{"avg_metrics": {"loss": %g, "epochs": %g}}`, loss*float64(40-step)/30, float64(step)/10)})
			}
		}
	}
	must(t, m.DB.InsertMetrics(ctx, reports))
	trials, err := m.DB.Trials(ctx, e.ID)
	must(t, err)
	return e, trials
}

// rowIDs are the trial ids of the trials table's rows, in order.
func rowIDs(t *testing.T, page playwright.Page) []string {
	t.Helper()
	ids, err := page.Locator("#trials tbody tr").EvaluateAll(`rows => rows.map(r => r.dataset.trial)`)
	must(t, err)
	var out []string
	for _, id := range ids.([]any) {
		out = append(out, id.(string))
	}
	return out
}

// TestTheTrialsTabIsAServerSortedPagedTableWithColumnsAndCompareInItsURL
// reads an experiment of 61 trials at 1440 and 390 px as a person would:
// fifty a page, sorted by the server by a heading (trials without a best
// loss last both ways), the columns chosen kept in the URL through a
// reload, two trials ticked and compared.
func TestTheTrialsTabIsAServerSortedPagedTableWithColumnsAndCompareInItsURL(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	e, trials := tableExperiment(t, m, 60)
	base := m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10)
	best := map[string]*float64{}
	for _, tr := range trials {
		best[strconv.FormatInt(tr.ID, 10)] = tr.BestValidation
	}
	url := func(page playwright.Page, re string) {
		t.Helper()
		must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(re)))
	}
	for _, width := range []int{1440, 390} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			page := browser.NewPage(t, width)
			signIn(t, page, m.URL, "admin", "")
			must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
			_, err := page.Goto(base + "?tab=trials")
			must(t, err)

			// A page of fifty, the batch every trial shares named, not a column.
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(50))
			must(t, expect(t, page.Locator("#trial-count")).ToHaveText("Page 1 of 2 · 61 trials"))
			must(t, expect(t, page.Locator("#constant-hparams")).ToContainText("batch=32"))
			noWiderThan(t, page, width)

			// Sorted by best loss: smallest first, the ones without last.
			must(t, page.Locator(`[id="sort-best"]`).Click())
			url(page, `\?sort=best&tab=trials$`)
			must(t, expect(t, page.Locator(`th[aria-sort="ascending"]`)).ToContainText("Best loss"))
			first := rowIDs(t, page)
			for i := 1; i < len(first); i++ {
				if *best[first[i-1]] > *best[first[i]] {
					t.Fatalf("ascending, trial %s (%g) comes before %s (%g)", first[i-1], *best[first[i-1]], first[i], *best[first[i]])
				}
			}
			must(t, page.Locator(`#trial-pager a[rel="next"]`).Click())
			url(page, `\?page=2&sort=best&tab=trials$`)
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(11))
			last := rowIDs(t, page)
			for _, id := range last[len(last)-11:] {
				if best[id] != nil {
					t.Fatalf("page 2 of ascending ends with trial %s, which has a loss", id)
				}
			}
			// Descending: largest first, and still the ones without last.
			must(t, page.Locator(`#trial-pager a[rel="first"]`).Click())
			must(t, page.Locator(`[id="sort-best"]`).Click())
			url(page, `\?order=desc&sort=best&tab=trials$`)
			desc := rowIDs(t, page)
			if best[desc[0]] == nil || *best[desc[0]] < *best[first[len(first)-1]] {
				t.Fatalf("descending starts with trial %s", desc[0])
			}
			must(t, page.Locator(`#trial-pager a[rel="last"]`).Click())
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(11))
			for _, id := range rowIDs(t, page) {
				if best[id] != nil {
					t.Fatalf("the last page of descending has trial %s with a loss", id)
				}
			}

			// The column chooser: without State, with batch and the latest
			// validation loss; the URL keeps them through a reload.
			must(t, page.Locator("#trial-columns summary").Click())
			must(t, page.Locator(`[id="col-state"]`).Uncheck())
			must(t, page.Locator(`[id="col-hp.batch"]`).Check())
			must(t, page.Locator(`[id="col-m.loss"]`).Check())
			must(t, page.Locator("#apply-columns").Click())
			url(page, `\?cols=hp.batch%2Chp.lr%2Cbest%2Cm.loss%2Csteps%2Crestarts%2Ccheckpoints%2Cstarted%2Cended%2Cduration&order=desc&sort=best&tab=trials$`)
			head := page.Locator("#trials thead")
			for _, reload := range []bool{false, true} {
				if reload {
					_, err = page.Reload()
					must(t, err)
				}
				must(t, expect(t, head).ToContainText("batch"))
				must(t, expect(t, head.Locator(`[id="sort-m.loss"]`)).ToBeVisible())
				must(t, expect(t, head.Locator(`[id="sort-state"]`)).ToHaveCount(0))
				must(t, expect(t, page.Locator("#trials tbody tr").First().Locator("td.metric")).ToHaveText(regexp.MustCompile(`^\d`)))
			}
			noWiderThan(t, page, width)
			keepScreenshot(t, page, fmt.Sprintf("trials-table-columns-%d", width))

			// Two trials ticked open the compare page with exactly them.
			ids := rowIDs(t, page)
			must(t, page.Locator(`[id="compare-`+ids[0]+`"]`).Check())
			must(t, page.Locator(`[id="compare-`+ids[2]+`"]`).Check())
			must(t, page.Locator("#compare-trials").Click())
			url(page, `/compare\?trials=`+ids[0]+`&trials=`+ids[2]+`$`)
			for _, id := range []string{ids[0], ids[2]} {
				must(t, expect(t, page.Locator("main")).ToContainText("Trial "+id))
			}
			must(t, expect(t, page.Locator(`#main a[href="/trials/`+ids[1]+`"]`)).ToHaveCount(0))
		})
	}
}

// TestBrushedTrialsHighlightAndOpenInTheTrialsTab brushes the parallel
// coordinates at 1440 and 390 px: the scatter plot greys the others, the
// brush survives a reload (it is in the URL), and its link opens the
// Trials tab with only the brushed trials.
func TestBrushedTrialsHighlightAndOpenInTheTrialsTab(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	e, _ := tableExperiment(t, m, 30)
	base := m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10)
	for _, width := range []int{1440, 390} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			page := browser.NewPage(t, width)
			signIn(t, page, m.URL, "admin", "")
			must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
			_, err := page.Goto(base + "?tab=hyperparameters")
			must(t, err)
			scatter := page.Locator(`[id="scatter-lr"]`)
			must(t, expect(t, scatter.Locator(".uplot canvas")).ToBeVisible())
			must(t, expect(t, page.Locator("#brushed-link")).ToBeHidden())

			// Drag along the loss axis (the last) from its bottom half way up.
			r, err := page.Evaluate(`(() => {
				document.querySelector("#parallel-coordinates").scrollIntoView({block: "center"});
				const axes = document.querySelectorAll("#parallel-coordinates g[data-axis] line");
				const r = axes[axes.length - 1].getBoundingClientRect();
				return [r.x, r.y, r.height].map(String);
			})()`)
			must(t, err)
			var f [3]float64
			for i, v := range r.([]any) {
				f[i], err = strconv.ParseFloat(v.(string), 64)
				must(t, err)
			}
			must(t, page.Mouse().Move(f[0], f[1]+f[2]+4))
			must(t, page.Mouse().Down())
			must(t, page.Mouse().Move(f[0], f[1]+f[2]*0.5, playwright.MouseMoveOptions{Steps: playwright.Int(6)}))
			must(t, page.Mouse().Up())
			count := page.Locator("#brush-count")
			must(t, expect(t, count).ToHaveText(regexp.MustCompile(`^\d+ of 20 trials in the brushed ranges$`)))
			n := must1(count.TextContent())
			n = n[:strings.Index(n, " ")]
			if k, _ := strconv.Atoi(n); k == 0 || k == 20 {
				t.Fatalf("the brush keeps %s of 20 trials", n)
			}
			// The scatter plot draws the others grey.
			must(t, expect(t, scatter).ToHaveAttribute("data-brushed", n))
			must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`#brush=\d+%3A`)))
			keepScreenshot(t, page, fmt.Sprintf("brushed-hyperparameters-%d", width))

			// The brush is in the URL: a reload brushes the same trials.
			_, err = page.Reload()
			must(t, err)
			must(t, expect(t, count).ToHaveText(n+" of 20 trials in the brushed ranges"))
			must(t, expect(t, scatter).ToHaveAttribute("data-brushed", n))
			visible, err := page.Locator("#hparam-trials tbody tr:visible").EvaluateAll(`rows => rows.map(r => r.dataset.trial).sort()`)
			must(t, err)

			// Its link opens the Trials tab with those trials alone.
			link := page.Locator("#brushed-link a")
			must(t, expect(t, link).ToHaveText("Show the "+n+" brushed trials in the Trials tab"))
			must(t, link.Click())
			must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`\?brushed=[\d%C]+&tab=trials$`)))
			must(t, expect(t, page.Locator("#brushed-filter")).ToContainText("Showing the "+n+" of 31 trials brushed"))
			rows, err := page.Locator("#trials tbody tr").EvaluateAll(`rows => rows.map(r => r.dataset.trial).sort()`)
			must(t, err)
			if fmt.Sprint(rows) != fmt.Sprint(visible) {
				t.Errorf("the Trials tab lists %v, the brush kept %v", rows, visible)
			}
			noWiderThan(t, page, width)
			keepScreenshot(t, page, fmt.Sprintf("brushed-trials-%d", width))
			// Sorting keeps the brushed filter.
			must(t, page.Locator(`[id="sort-best"]`).Click())
			must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`\?brushed=[\d%C]+&sort=best&tab=trials$`)))
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(len(rows.([]any))))
			must(t, page.Locator("#show-all-trials").Click())
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(31))
		})
	}
}

// TestChartSettingsSurviveAReload sets a chart grid's x axis, a panel's
// log scale and smoothing and the legend's filter on the experiment, trial
// and compare pages at 1440 and 390 px, reloads, and finds them as set.
func TestChartSettingsSurviveAReload(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	e, trials := tableExperiment(t, m, 25) // fifteen with metrics, after the searcher's own
	id := func(i int) string { return strconv.FormatInt(trials[i].ID, 10) }
	pages := map[string]struct {
		path, panel string
		lines       int // in the tooltip
	}{
		"experiment": {"/experiments/" + strconv.FormatInt(e.ID, 10), "#chart-validation-loss", 1},
		"trial":      {"/trials/" + id(1), "#chart-loss", 1},
		"compare":    {"/compare?trials=" + id(1) + "," + id(2), "#chart-validation-loss", 2},
	}
	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
		for name, p := range pages {
			t.Run(fmt.Sprintf("%s at %dpx", name, width), func(t *testing.T) {
				_, err := page.Goto(m.URL + p.path)
				must(t, err)
				panel := page.Locator(p.panel)
				must(t, expect(t, panel.Locator(".uplot canvas")).ToBeVisible())
				grid := page.Locator(".chart-set").First()
				must(t, expect(t, grid.Locator("select[data-xaxis] option[value=epochs]")).ToHaveCount(1))
				_, err = grid.Locator("select[data-xaxis]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"epochs"}})
				must(t, err)
				must(t, panel.Locator("input[data-log]").Check())
				_, err = panel.Locator("select[data-smooth]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"0.9"}})
				must(t, err)
				filter := ""
				if name == "experiment" { // fifteen lines fold the legend, with its filter
					filter = "trial " + id(3)
					must(t, grid.Locator(".chart-legend summary").Click())
					must(t, grid.Locator(".chart-legend input[type=search]").Fill(filter))
					must(t, expect(t, grid.Locator(".chart-legend li:visible")).ToHaveCount(1))
				}
				must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`#.*\.x=epochs`)))
				_, err = page.Reload()
				must(t, err)
				must(t, expect(t, panel.Locator(".uplot canvas")).ToBeVisible())
				must(t, expect(t, grid.Locator("select[data-xaxis]")).ToHaveValue("epochs"))
				must(t, expect(t, panel.Locator("input[data-log]")).ToBeChecked())
				must(t, expect(t, panel.Locator("select[data-smooth]")).ToHaveValue("0.9"))
				if filter != "" {
					must(t, expect(t, grid.Locator(".chart-legend input[type=search]")).ToHaveValue(filter))
					must(t, expect(t, grid.Locator(".chart-legend li:visible")).ToHaveCount(1))
				}
				// The x axis is epochs (1 to 3), not batches.
				tooltipAt(t, page, panel, 1, 0.5, p.lines)
				must(t, expect(t, panel.Locator(".chart-tip .tip-head")).ToHaveText("Epochs 3"))
				noWiderThan(t, page, width)
			})
		}
	}
}

func must1[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
