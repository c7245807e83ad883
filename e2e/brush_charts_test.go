package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// brushLastAxis drags along the parallel coordinates' last axis (the
// metric's) from its bottom half way up, and answers the trials the
// hyperparameters tab's table keeps, sorted.
func brushLastAxis(t *testing.T, page playwright.Page) []string {
	t.Helper()
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
	must(t, expect(t, page.Locator("#brush-count")).ToHaveText(regexp.MustCompile(`^\d+ of 20 trials in the brushed ranges$`)))
	ids := strs(t, must1(page.Locator("#hparam-trials tbody tr:visible").EvaluateAll(`rows => rows.map(r => r.dataset.trial)`)))
	if len(ids) == 0 || len(ids) == 20 {
		t.Fatalf("the brush keeps %d of 20 trials", len(ids))
	}
	return ids
}

// strs are a page.Evaluate's strings, sorted.
func strs(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	slices.Sort(out)
	return out
}

// chartLines reads uPlot's own series of the overview's validation loss
// panel: the trials it draws at full strength (their colour opaque, the
// line wider than the default) and those it draws faded (the colour at
// alpha 0x30, thinner), sorted.
func chartLines(t *testing.T, page playwright.Page) (lit, faded []string) {
	t.Helper()
	v, err := page.Evaluate(`(() => {
		const grid = document.getElementById("experiment-chart").chartGrid;
		const p = grid.panels.get("validation/loss");
		const out = {lit: [], faded: [], odd: []};
		p.cols.ss.forEach((s, i) => {
			const u = p.u.series[i + 1], stroke = u.stroke(p.u, i + 1);
			if (stroke === s.color && u.width > 2) out.lit.push(String(s.trial));
			else if (stroke === s.color + "30" && u.width === 1) out.faded.push(String(s.trial));
			else if (stroke === s.color && u.width === 1.5) out.odd.push("plain " + s.trial);
			else out.odd.push(s.trial + ": " + stroke + " " + u.width);
		});
		return out;
	})()`)
	must(t, err)
	m := v.(map[string]any)
	if odd := strs(t, m["odd"]); len(odd) > 0 && (len(strs(t, m["lit"])) > 0 || len(strs(t, m["faded"])) > 0) {
		t.Fatalf("lines neither highlighted nor faded beside brushed ones: %v", odd)
	}
	return strs(t, m["lit"]), strs(t, m["faded"])
}

// TestBrushedTrialsHighlightInTheOverviewChartsAndTrialsTab brushes the
// hyperparameters tab's metric axis at 1440 and 390 px (its own metric
// charts follow the brush as it is drawn and cleared), follows the
// Overview tab's link, and finds the brushed trials' lines drawn at full
// strength and the others faded in uPlot's own series, with a note saying
// so; a reload keeps it, the Trials tab's link marks the brushed rows, and
// the note's clear draws every line as before.
func TestBrushedTrialsHighlightInTheOverviewChartsAndTrialsTab(t *testing.T) {
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
			brushed := brushLastAxis(t, page)
			n := strconv.Itoa(len(brushed))
			faded := strconv.Itoa(20 - len(brushed))
			assertURL := playwright.NewPlaywrightAssertions(10000).Page(page)
			must(t, assertURL.ToHaveURL(regexp.MustCompile(`\?tab=hyperparameters#brush=\d+%3A[^&]+&brushed=[\d%C]+$`)))
			panel := page.Locator("#chart-validation-loss")
			check := func(step string) {
				t.Helper()
				must(t, panel.ScrollIntoViewIfNeeded())
				must(t, expect(t, panel.Locator(".uplot canvas")).ToBeVisible())
				must(t, expect(t, panel).ToHaveAttribute("data-highlighted", n))
				must(t, expect(t, panel).ToHaveAttribute("data-faded", faded))
				must(t, expect(t, page.Locator("#chart-brushed")).ToHaveText(n+" brushed trials highlighted · clear"))
				lit, dim := chartLines(t, page)
				if fmt.Sprint(lit) != fmt.Sprint(brushed) || len(dim) != 20-len(brushed) {
					t.Errorf("%s: the chart highlights %v and fades %d lines; the brush kept %v", step, lit, len(dim), brushed)
				}
			}
			// The hyperparameters tab's own metric charts follow the brush
			// as it changes: a click on the axis clears it.
			check("on the hyperparameters tab")
			keepScreenshot(t, page, fmt.Sprintf("brushed-hyperparameters-chart-%d", width))
			must(t, page.Locator("#parallel-coordinates g[data-axis] .brush-area").Last().Click())
			must(t, expect(t, page.Locator("#brush-count")).ToContainText("plotted"))
			must(t, expect(t, panel).ToHaveAttribute("data-highlighted", ""))
			must(t, expect(t, page.Locator("#chart-brushed")).ToBeHidden())
			if again := brushLastAxis(t, page); fmt.Sprint(again) != fmt.Sprint(brushed) {
				t.Fatalf("the same brush kept %v, then %v", brushed, again)
			}
			check("brushed again")

			// The Overview tab's link carries the brush.
			must(t, page.Locator("#tab-overview").Click())
			must(t, assertURL.ToHaveURL(regexp.MustCompile(`/experiments/\d+#brush=\d+%3A[^&]+&brushed=[\d%C]+$`)))
			check("after the tab link")
			noWiderThan(t, page, width)
			keepScreenshot(t, page, fmt.Sprintf("brushed-overview-chart-%d", width))

			_, err = page.Reload()
			must(t, err)
			check("after a reload")

			// The Trials tab marks the brushed rows (the table is not
			// filtered to them) and links to the filtered table.
			must(t, page.Locator("#tab-trials").Click())
			must(t, expect(t, page.Locator("#trials tbody tr")).ToHaveCount(31))
			must(t, expect(t, page.Locator("#brushed-highlight")).ToContainText(n+" brushed trials highlighted ("+n+" on this page)"))
			rows := strs(t, must1(page.Locator("#trials tbody tr.brushed").EvaluateAll(`rows => rows.map(r => r.dataset.trial)`)))
			if fmt.Sprint(rows) != fmt.Sprint(brushed) {
				t.Errorf("the Trials tab marks %v, the brush kept %v", rows, brushed)
			}
			byID := slices.SortedFunc(slices.Values(brushed), func(a, b string) int { return must1(strconv.Atoi(a)) - must1(strconv.Atoi(b)) })
			must(t, expect(t, page.Locator("#brushed-only")).ToHaveAttribute("href", "/experiments/"+strconv.FormatInt(e.ID, 10)+"?brushed="+strings.Join(byID, "%2C")+"&tab=trials"))
			keepScreenshot(t, page, fmt.Sprintf("brushed-trials-highlighted-%d", width))

			// Back on the Overview, the note's clear draws every line alike
			// and the tab links no longer carry the brush.
			must(t, page.Locator("#tab-overview").Click())
			check("back on the overview")
			must(t, page.Locator("#chart-brush-clear").Click())
			must(t, expect(t, page.Locator("#chart-brushed")).ToBeHidden())
			must(t, expect(t, panel).ToHaveAttribute("data-highlighted", ""))
			if lit, dim := chartLines(t, page); len(lit)+len(dim) > 0 {
				t.Errorf("after clear the chart still highlights %v and fades %v", lit, dim)
			}
			must(t, assertURL.ToHaveURL(regexp.MustCompile(`/experiments/\d+$`)))
			must(t, expect(t, page.Locator("#tab-hyperparameters")).ToHaveAttribute("href", regexp.MustCompile(`\?tab=hyperparameters$`)))
			_, err = page.Reload()
			must(t, err)
			must(t, panel.ScrollIntoViewIfNeeded())
			must(t, expect(t, panel.Locator(".uplot canvas")).ToBeVisible())
			must(t, expect(t, page.Locator("#chart-brushed")).ToBeHidden())
		})
	}
}
