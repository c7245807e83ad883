package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
)

// TestAPersonFiltersLogsByLevelAndAboveAndByTrial: on an experiment's logs
// tab, DEBUG with a search shows the INFO lines that match (DEBUG means
// "DEBUG and above"), a line reads its level once, one trial can be
// picked, and a filter that matches nothing says so. The master log page
// filters the same way. At 1440 and 390 px.
func TestAPersonFiltersLogsByLevelAndAboveAndByTrial(t *testing.T) {
	m, e, trials := newBrowserFixture(t)
	must(t, m.DB.InsertTaskLogs(t.Context(), []resolute.TaskLog{
		{TaskID: trials[1].TaskID(), AllocationID: trials[1].TaskID() + ".1", Time: time.Now(), Level: "INFO", Log: "INFO: [7] determined.core: loading shards\n"},
		{TaskID: trials[1].TaskID(), AllocationID: trials[1].TaskID() + ".1", Time: time.Now(), Level: "DEBUG", Log: "DEBUG: [7] determined.core: shard 3 opened\n"},
	}))
	m.Logs.Add(time.Now(), "WARN", "the checkpoint volume is almost full")
	m.Logs.Add(time.Now(), "INFO", "a quiet master line")
	id := strconv.FormatInt(e.ID, 10)

	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", "")
		_, err := page.Goto(m.URL + "/experiments/" + id + "?tab=logs")
		must(t, err)
		lines := page.Locator("#experiment-log-lines > span")
		must(t, expect(t, page.Locator("#experiment-log-lines")).ToContainText("INFO [7] determined.core: loading shards"))
		must(t, expect(t, page.Locator("#experiment-log-lines")).Not().ToContainText("INFO INFO"))

		filter := func(level, search, trial string) {
			t.Helper()
			_, err := page.Locator("#f-level").SelectOption(playwright.SelectOptionValues{Values: &[]string{level}})
			must(t, err)
			_, err = page.Locator("#f-trial").SelectOption(playwright.SelectOptionValues{Values: &[]string{trial}})
			must(t, err)
			must(t, page.Locator("#f-search").Fill(search))
			must(t, page.Locator("#log-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
		}
		filter("DEBUG", "loading", "")
		must(t, expect(t, lines).ToHaveCount(1))
		must(t, expect(t, lines.First()).ToContainText("INFO [7] determined.core: loading shards"))
		must(t, expect(t, page.Locator("#experiment-log-empty")).ToHaveCount(0))

		filter("INFO", "", strconv.FormatInt(trials[1].ID, 10))
		must(t, expect(t, lines).ToHaveCount(2)) // "trial 1 trains" and "loading shards"; not the DEBUG line
		must(t, expect(t, page.Locator("#experiment-log-lines")).Not().ToContainText("trial 2 trains"))

		filter("DEBUG", "nowhere", "")
		must(t, expect(t, page.Locator("#experiment-log-empty")).ToBeVisible())
		must(t, expect(t, page.Locator("#experiment-log-empty")).ToHaveText(`No line matches level ≥ DEBUG and "nowhere".`))
		screenshot(t, page, fmt.Sprintf("logs-empty-%d", width))

		_, err = page.Goto(m.URL + "/logs")
		must(t, err)
		_, err = page.Locator("#f-level").SelectOption(playwright.SelectOptionValues{Values: &[]string{"WARNING"}})
		must(t, err)
		must(t, page.Locator("#f-search").Fill("volume"))
		must(t, page.Locator("#log-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
		must(t, expect(t, page.Locator("#log-lines > span")).ToHaveCount(1))
		must(t, expect(t, page.Locator("#log-lines")).ToContainText("the checkpoint volume is almost full"))
		screenshot(t, page, fmt.Sprintf("master-logs-%d", width))
	}
}
