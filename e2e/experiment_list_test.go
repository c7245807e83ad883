package e2e

import (
	"regexp"
	"slices"
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

// listExperiment creates a paused experiment and puts it in state ("" keeps
// it paused); it returns its ID as the page shows it.
func listExperiment(t *testing.T, m *handlerstest.Master, name, labels, state string) string {
	t.Helper()
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: " + name + "\nlabels: [" + labels + "]\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	must(t, err)
	if state != "" {
		must(t, m.DB.SetExperimentState(t.Context(), e.ID, state))
	}
	return strconv.FormatInt(e.ID, 10)
}

// listOrder is the experiment IDs of the list, top first.
func listOrder(t *testing.T, page playwright.Page) []string {
	t.Helper()
	ids, err := page.Locator("#experiments tbody tr td:nth-child(2)").AllInnerTexts()
	must(t, err)
	return ids
}

func waitListOrder(t *testing.T, page playwright.Page, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := listOrder(t, page); !slices.Equal(got, want); got = listOrder(t, page) {
		if time.Now().After(deadline) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTheExperimentListFiltersSortsAndCompares(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	alpha := listExperiment(t, m, "alpha-net", "vision", resolute.StateCompleted)
	beta := listExperiment(t, m, "beta-net", "nlp", resolute.StateCompleted)
	gamma := listExperiment(t, m, "gamma-vision", "vision", "")
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/experiments")
	must(t, err)
	waitListOrder(t, page, gamma, beta, alpha)

	// Text typed in the search box filters as one types, and the URL follows.
	must(t, page.GetByLabel("Name or description").Fill("net"))
	waitListOrder(t, page, beta, alpha)
	pageURL := playwright.NewPlaywrightAssertions(10000).Page(page)
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/experiments\?q=net$`)))

	// A column heading sorts; again, the other way; the filter stays.
	must(t, page.Locator("#sort-name").Click())
	waitListOrder(t, page, alpha, beta)
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/experiments\?q=net&sort=name$`)))
	must(t, expect(t, page.Locator(`th[aria-sort="ascending"]`)).ToHaveText("Name ▲"))
	must(t, page.Locator("#sort-name").Click())
	waitListOrder(t, page, beta, alpha)
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/experiments\?order=desc&q=net&sort=name$`)))

	// The label filter, with the sort kept; the address works on its own.
	must(t, page.GetByLabel("Name or description").Fill(""))
	_, err = page.GetByLabel("Label", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).SelectOption(playwright.SelectOptionValues{Values: &[]string{"vision"}})
	must(t, err)
	waitListOrder(t, page, gamma, alpha)
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/experiments\?label=vision&order=desc&sort=name$`)))
	_, err = page.Reload()
	must(t, err)
	waitListOrder(t, page, gamma, alpha)
	must(t, expect(t, page.GetByLabel("Label", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToHaveValue("vision"))

	// The poll keeps the filter and the order.
	page.WaitForTimeout(3500)
	waitListOrder(t, page, gamma, alpha)

	// Two ticked rows compare.
	must(t, page.GetByLabel("Select experiment "+gamma+" gamma-vision").Check())
	must(t, page.GetByLabel("Select experiment "+alpha+" alpha-net").Check())
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Compare"}).Click())
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/compare\?experiments=`+gamma+`(%2C|,)`+alpha+`$`)))
	must(t, expect(t, page.Locator("#compare-name")).ToContainText("gamma-vision"))

	// On a phone the list scrolls inside its table only.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = phone.Goto(m.URL + "/experiments?sort=name")
	must(t, err)
	waitListOrder(t, phone, alpha, beta, gamma)
	noWiderThan(t, phone, 390)
	screenshot(t, phone, "phone-experiment-list")
}

func TestABatchArchiveReportsEachExperiment(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	done1 := listExperiment(t, m, "done-one", "", resolute.StateCompleted)
	done2 := listExperiment(t, m, "done-two", "", resolute.StateCanceled)
	paused := listExperiment(t, m, "still-paused", "", "")
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/experiments")
	must(t, err)
	waitListOrder(t, page, paused, done2, done1)

	for _, id := range []string{done1, done2, paused} {
		must(t, page.Locator("#select-"+id).Check())
	}
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Archive", Exact: playwright.Bool(true)}).Click())
	flash := page.Locator("#flash")
	must(t, expect(t, flash).ToContainText("Archived 2 of 3 experiments"))
	must(t, expect(t, flash).ToContainText("Refused experiment "+paused+": experiment "+paused+" is PAUSED"))
	// Archived ones leave the list, until asked for.
	waitListOrder(t, page, paused)
	must(t, page.GetByLabel("Show archived").Check())
	waitListOrder(t, page, paused, done2, done1)
	must(t, expect(t, page.Locator("#experiment-"+done1)).ToContainText("archived"))
	screenshot(t, page, "batch-archive")

	// Kill asks first.
	var asked string
	page.OnDialog(func(d playwright.Dialog) {
		asked = d.Message()
		d.Accept()
	})
	must(t, page.Locator("#select-"+paused).Check())
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Kill", Exact: playwright.Bool(true)}).Click())
	must(t, expect(t, flash).ToContainText("Killing 1 of 1 experiments ("+paused+")."))
	if asked != "Kill the ticked experiments?" {
		t.Errorf("the kill asked %q", asked)
	}
}

func TestTheDashboardShowsARunningExperiment(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	must(t, expect(t, page.Locator("#no-my-experiments")).ToBeVisible())
	must(t, expect(t, page.Locator("#quick-new-experiment")).ToBeVisible())
	must(t, expect(t, page.Locator("#launch-cpu-notebook")).ToBeVisible())

	// Submitted elsewhere (as by the CLI), it shows up running, and its slot
	// shows in the pool's usage, without a reload.
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{ConfigYAML: "name: on-the-dashboard\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 1}\n"})
	must(t, err)
	row := page.Locator("#my-experiment-" + strconv.FormatInt(e.ID, 10))
	must(t, expect(t, row).ToContainText("on-the-dashboard"))
	must(t, expect(t, row).ToContainText("ACTIVE"))
	must(t, expect(t, page.Locator("#utilization-default")).ToContainText("1 / 2"))
	screenshot(t, page, "dashboard")

	// From the dashboard to the experiment.
	must(t, row.GetByRole("link").First().Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/experiments/`+strconv.FormatInt(e.ID, 10)+`$`)))
}

// overflow is how far an element's content runs past its box, in px.
func overflow(t *testing.T, page playwright.Page, selector string) int {
	t.Helper()
	v, err := page.Evaluate(`s => { const e = document.querySelector(s); return e.scrollWidth - e.clientWidth }`, selector)
	must(t, err)
	n, _ := v.(int)
	return n
}

func TestTheExperimentListFitsItsPanelAndKeepsItsColumnsInTheURL(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	long := listExperiment(t, m, "an-experiment-whose-name-goes-on-and-on-resnet50-imagenet-lr-sweep-with-warmup",
		"vision, imagenet, a-rather-long-label-for-the-sweep, baseline, fp16", resolute.StateCompleted)
	listExperiment(t, m, "beta-net", "nlp", "")

	for _, width := range []int{1280, 1440, 390} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			page := browser.NewPage(t, width)
			signIn(t, page, m.URL, "admin", "")
			_, err := page.Goto(m.URL + "/experiments")
			must(t, err)
			must(t, expect(t, page.Locator("#experiment-"+long)).ToBeVisible())
			if width >= 1280 {
				// The whole table shows on a laptop's screen: no sideways scroll.
				if n := overflow(t, page, "#experiment-table .table-wrap"); n > 0 {
					t.Errorf("the table runs %d px past its panel", n)
				}
				keepScreenshot(t, page, "experiment-list-"+strconv.Itoa(width))
			}
			// On a phone the table scrolls in its own box, the page never.
			if n := overflow(t, page, "#main"); n > 0 {
				t.Errorf("the page's main panel runs %d px past its box", n)
			}
			noWiderThan(t, page, width)
			// A cut name keeps its full text on hover.
			title, err := page.Locator("#experiment-" + long + " td.name").GetAttribute("title")
			must(t, err)
			if !strings.HasPrefix(title, "an-experiment-whose-name-goes-on-and-on-resnet50-imagenet-lr-sweep-with-warmup") {
				t.Errorf("the name's title %q", title)
			}
		})
	}

	// The column chooser: ticking the pool and unticking the user shows and
	// hides them at once, the URL keeps the choice, and a reload keeps it.
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	_, err := page.Goto(m.URL + "/experiments")
	must(t, err)
	must(t, expect(t, page.Locator("th.col-pool")).ToHaveCount(0))
	must(t, expect(t, page.Locator("th.col-user")).ToHaveCount(1))
	must(t, page.Locator("#column-chooser summary").Click())
	must(t, page.Locator("#col-pool").Check())
	must(t, expect(t, page.Locator("th.col-pool")).ToHaveCount(1))
	must(t, page.Locator("#col-user").Uncheck())
	must(t, expect(t, page.Locator("th.col-user")).ToHaveCount(0))
	pageURL := playwright.NewPlaywrightAssertions(10000).Page(page)
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`/experiments\?cols=state%2Cprogress%2Cbest%2Csearcher%2Ctrials%2Cstart%2Clabels%2Cpool$`)))
	// Sorting keeps the columns.
	must(t, page.Locator("#column-chooser summary").Click())
	must(t, page.Locator("#sort-name").Click())
	must(t, pageURL.ToHaveURL(regexp.MustCompile(`cols=state%2Cprogress%2Cbest%2Csearcher%2Ctrials%2Cstart%2Clabels%2Cpool&sort=name$`)))
	_, err = page.Reload()
	must(t, err)
	must(t, expect(t, page.Locator("th.col-pool")).ToHaveCount(1))
	must(t, expect(t, page.Locator("th.col-user")).ToHaveCount(0))
	must(t, expect(t, page.Locator("#col-pool")).ToBeChecked())
	if n := overflow(t, page, "#experiment-table .table-wrap"); n > 0 {
		t.Errorf("with the pool shown the table runs %d px past its panel", n)
	}
}

func TestTheConfigurationTabShowsTheConfigsAtFullHeight(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: tall # a comment\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n" +
			"hyperparameters:\n  zeta: 1\n  lr: {type: log, minval: -4, maxval: -1, base: 10}\nenvironment:\n  image: example/unused:1\n"})
	must(t, err)
	for _, width := range []int{1440, 390} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			page := browser.NewPage(t, width)
			signIn(t, page, m.URL, "admin", "")
			_, err := page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10) + "?tab=configuration")
			must(t, err)
			must(t, page.Locator("#experiment-config summary").Click())
			for _, id := range []string{"#experiment-original-config pre", "#experiment-config pre"} {
				// The whole config shows: the box scrolls no lines of its own.
				v, err := page.Evaluate(`s => { const e = document.querySelector(s); return e.scrollHeight - e.clientHeight }`, id)
				must(t, err)
				if n, _ := v.(int); n > 0 {
					t.Errorf("%s hides %d px of its config", id, n)
				}
			}
			must(t, expect(t, page.Locator("#experiment-config .unused[title^='not in effect'] .yk").First()).ToHaveText("image"))
			noWiderThan(t, page, width)
			screenshot(t, page, "experiment-config-"+strconv.Itoa(width))
		})
	}
}
