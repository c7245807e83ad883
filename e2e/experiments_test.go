package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// tgzDir packs a directory's contents as a tar.gz, as `det experiment
// create` uploads it.
func tgzDir(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	must(t, err)
	must(t, tw.Close())
	must(t, zw.Close())
	return buf.Bytes()
}

// screenshot keeps a picture of the page in e2e/screenshots/ when
// E2E_SCREENSHOTS is set, for a person to look at.
func screenshot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	if os.Getenv("E2E_SCREENSHOTS") == "" {
		return
	}
	os.MkdirAll("screenshots", 0o755)
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join("screenshots", name+".png")), FullPage: playwright.Bool(true)})
	must(t, err)
}

// keepScreenshot always keeps a picture of the page in e2e/screenshots/
// (git ignores it) and logs its path, so that a test run names the
// pictures of the pages people look at most: the charts grid, the trial
// page's tabs, the experiment list, the trials table.
func keepScreenshot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	must(t, os.MkdirAll("screenshots", 0o755))
	path := filepath.Join("screenshots", name+".png")
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)})
	must(t, err)
	t.Logf("screenshot: e2e/%s", path)
}

// noWiderThan fails when the page scrolls sideways on a screen of width px.
func noWiderThan(t *testing.T, page playwright.Page, px int) {
	t.Helper()
	width, err := page.Evaluate("document.documentElement.scrollWidth")
	must(t, err)
	if w, ok := width.(int); !ok || w > px {
		t.Fatalf("page is %vpx wide on a %dpx screen", width, px)
	}
}

func TestAnExperimentIsSubmittedAndFollowedToCompletion(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	must(t, navLink(page, "Experiments").Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Experiments"))
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "New experiment"}).Click())

	config, err := os.ReadFile("../examples/core-api-stdlib/const.yaml")
	must(t, err)
	text := strings.Replace(string(config), "max_steps: 400", "max_steps: 100", 1)
	form := page.Locator("#new-experiment")
	code := []playwright.InputFile{{Name: "core-api-stdlib.tar.gz", MimeType: "application/gzip", Buffer: tgzDir(t, "../examples/core-api-stdlib")}}

	// A mistake comes back beside the editor, with what was typed.
	typo := strings.Replace(text, "metric: validation_loss", "metrc: validation_loss", 1)
	must(t, form.GetByLabel("Configuration (YAML)").Fill(typo))
	must(t, form.Locator("#f-code").SetInputFiles(code))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create experiment"}).Click())
	must(t, expect(t, page.Locator("#e-yaml")).ToContainText("metrc"))
	must(t, expect(t, page.Locator("#f-yaml")).ToHaveValue(typo))
	must(t, expect(t, page.Locator("#choose-code-again")).ToBeVisible())
	screenshot(t, page, "experiment-new-rejected")

	must(t, form.GetByLabel("Configuration (YAML)").Fill(text))
	must(t, form.Locator("#f-code").SetInputFiles(code))
	// Paused first, so the page is seen to follow the run once it starts.
	must(t, form.GetByLabel("Start paused").Check())
	screenshot(t, page, "experiment-new")
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create experiment"}).Click())

	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/experiments/\d+$`)))
	must(t, expect(t, page.Locator("#flash")).ToContainText("Created experiment"))
	header := page.Locator("#experiment-header")
	must(t, expect(t, header).ToContainText("PAUSED"))
	must(t, expect(t, page.Locator("#action-activate")).ToBeVisible())

	// Start it behind the page's back; the page must notice by itself.
	id, err := strconv.ParseInt(page.URL()[strings.LastIndex(page.URL(), "/")+1:], 10, 64)
	must(t, err)
	_, err = page.Evaluate("window.notReloaded = true")
	must(t, err)
	must(t, m.Experiments.SetState(t.Context(), authz.System, id, "activate"))
	long := playwright.NewPlaywrightAssertions(60000)
	must(t, long.Locator(header.Locator(".tag.state")).ToHaveText("COMPLETED"))
	must(t, expect(t, page.Locator("#experiment-progress")).ToHaveAttribute("value", "100"))
	must(t, expect(t, page.Locator("#action-delete")).ToBeVisible())
	still, err := page.Evaluate("window.notReloaded === true")
	must(t, err)
	if still != true {
		t.Fatal("the page reloaded to show the new state")
	}
	screenshot(t, page, "experiment-completed")
	tabs := page.Locator("#experiment-tabs")
	must(t, tabs.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Logs"}).Click())
	must(t, long.Locator(page.Locator("#experiment-log-lines")).ToContainText("report_validation_metrics"))
	must(t, tabs.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Checkpoints"}).Click())
	must(t, expect(t, page.Locator("#checkpoints tbody tr").First()).ToContainText("Download"))

	must(t, tabs.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Trials"}).Click())
	must(t, page.Locator("#trials tbody tr a").First().Click())
	must(t, expect(t, page.Locator("#trial-header")).ToContainText("COMPLETED"))
	must(t, expect(t, page.Locator("#validation-metrics thead")).ToContainText("validation_loss"))
	must(t, expect(t, page.Locator("#validation-metrics tbody tr")).ToHaveCount(4))
	must(t, expect(t, page.Locator("#training-metrics tbody tr")).ToHaveCount(10))
	trialTabs := page.Locator("#trial-tabs")
	must(t, trialTabs.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Hyperparameters"}).Click())
	must(t, expect(t, page.Locator("#hparams")).ToContainText("max_steps"))

	// The log filter narrows the lines.
	must(t, trialTabs.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Logs"}).Click())
	must(t, page.Locator("#f-search").Fill("report_validation_metrics"))
	must(t, page.Locator("#log-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
	must(t, expect(t, page.Locator("#trial-log-lines span")).ToHaveCount(4))
	screenshot(t, page, "trial")

	// The list shows it, and the phone layout scrolls only inside tables.
	must(t, navLink(page, "Experiments").Click())
	must(t, expect(t, page.Locator("#experiment-"+strconv.FormatInt(id, 10))).ToContainText("COMPLETED"))
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, path := range []string{"/experiments", "/experiments/" + strconv.FormatInt(id, 10), "/experiments/new"} {
		_, err := phone.Goto(m.URL + path)
		must(t, err)
		must(t, expect(t, phone.Locator("main h1")).ToBeVisible())
		noWiderThan(t, phone, 390)
		screenshot(t, phone, "phone"+strings.ReplaceAll(path, "/", "-"))
	}
}

func TestTheExperimentListShowsNewRunsWithoutAReload(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/experiments")
	must(t, err)
	must(t, expect(t, page.Locator("#experiment-table")).ToContainText("No experiments yet"))

	// An experiment submitted elsewhere (as by the CLI) appears by itself.
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	_, err = m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: from-the-cli\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	must(t, err)
	must(t, expect(t, page.Locator("#experiments")).ToContainText("from-the-cli"))
	must(t, expect(t, page.Locator("#experiments")).ToContainText("PAUSED"))

	// The filter lives in the URL.
	_, err = page.Locator("#f-state").SelectOption(playwright.SelectOptionValues{Values: &[]string{"COMPLETED"}})
	must(t, err)
	must(t, page.Locator("#experiment-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/experiments\?state=COMPLETED$`)))
	must(t, expect(t, page.Locator("#experiment-table")).ToContainText("No COMPLETED experiments"))
}
