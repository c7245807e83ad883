package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheSmallerPointsOfTheExperimentPage, as a person meets them at 1440
// and 390 px: a Notes table renders as a table; the scheduling editor's
// numbers sit in number-sized inputs; a tab other than Overview folds the
// header under Details, which opens on a click; the breadcrumbs lead back.
func TestTheSmallerPointsOfTheExperimentPage(t *testing.T) {
	m, e, _ := newBrowserFixture(t)
	id := strconv.FormatInt(e.ID, 10)
	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		_, err := page.Goto(m.URL + "/experiments/" + id)
		must(t, err)

		// Scheduling: each number's input is sized for a number.
		must(t, page.Locator("#experiment-scheduling summary").Click())
		for _, f := range []string{"#f-priority", "#f-weight", "#f-max_slots"} {
			box, err := page.Locator(f).BoundingBox()
			must(t, err)
			if box == nil || box.Width > 200 {
				t.Errorf("%d px: %s is %v px wide, want a number's width", width, f, box)
			}
		}
		screenshot(t, page, fmt.Sprintf("scheduling-%d", width))

		// Notes: a Markdown table.
		must(t, page.Locator("#tab-notes").Click())
		must(t, page.Locator("#notes-editor summary").Click())
		must(t, page.Locator("#f-notes").Fill("| lr | loss |\n|---|---|\n| 0.001 | **0.25** |\n| 0.01 | 0.31 |"))
		must(t, page.Locator("#notes-save").Click())
		table := page.Locator("#notes-rendered table")
		must(t, expect(t, table.Locator("th")).ToHaveText([]string{"lr", "loss"}))
		must(t, expect(t, table.Locator("tbody tr")).ToHaveCount(2))
		must(t, expect(t, table.Locator("tbody tr").First().Locator("strong")).ToHaveText("0.25"))

		// A compact header off the overview; its Details open on a click.
		header, err := page.Locator("#experiment-header").BoundingBox()
		must(t, err)
		if width == 1440 && header.Height > 200 {
			t.Errorf("the notes tab's header is %v px high", header.Height)
		}
		must(t, expect(t, page.Locator("#experiment-more dl.facts")).Not().ToBeVisible())
		must(t, page.Locator("#experiment-more > summary").Click())
		must(t, expect(t, page.Locator("#experiment-more dl.facts")).ToBeVisible())
		screenshot(t, page, fmt.Sprintf("compact-header-%d", width))

		// Breadcrumbs are links: back to the experiment, then to its project.
		must(t, page.Locator("#breadcrumbs").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Experiment " + id}).Click())
		must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/experiments/`+id+`$`)))
		must(t, page.Locator(`#breadcrumbs a[href="/projects/`+strconv.FormatInt(e.ProjectID, 10)+`"]`).Click())
		must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/projects/\d+$`)))
	}
}

// TestAPersonStartsAShellAndRegistersWithoutACheckpoint: "New shell" beside
// the notebook buttons starts a shell whose page says what it is doing; the
// register page without a checkpoint explains where checkpoints are.
func TestAPersonStartsAShellAndRegistersWithoutACheckpoint(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		_, err := page.Goto(m.URL + "/tasks")
		must(t, err)
		must(t, page.Locator("#launch-shell").Click())
		must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/tasks/shell-\d+$`)))
		must(t, expect(t, page.Locator("#flash")).ToHaveText(regexp.MustCompile(`^Launched shell-\d+\.`)))
		must(t, expect(t, page.Locator("#task-status")).ToBeVisible())
		screenshot(t, page, fmt.Sprintf("new-shell-%d", width))
		must(t, page.Locator("#kill-task").Click())

		_, err = page.Goto(m.URL + "/models/register")
		must(t, err)
		must(t, expect(t, page.Locator("h1")).ToHaveText("Register a checkpoint"))
		must(t, expect(t, page.Locator("#register-explained")).ToContainText("Checkpoints"))
		must(t, page.Locator("#f-checkpoint_uuid").Fill("not-a-uuid"))
		must(t, page.Locator("#f-new_model_name").Fill("digits"))
		must(t, page.Locator("#register-checkpoint").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Register"}).Click())
		must(t, expect(t, page.Locator("#e-checkpoint_uuid")).ToBeVisible())
		screenshot(t, page, fmt.Sprintf("register-without-checkpoint-%d", width))
	}
}
