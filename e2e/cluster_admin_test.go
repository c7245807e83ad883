package e2e

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheClusterMessageShowsOnEveryPageUntilCleared: the message an
// administrator sets is a banner a user sees on each page they visit, at
// desktop and phone widths, and it is gone once cleared.
func TestTheClusterMessageShowsOnEveryPageUntilCleared(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var login resolute.LoginResponse
	apiJSON(t, m, "POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: "admin"}, &login)
	apiJSON(t, m, "POST", "/api/v1/users", login.Token, map[string]any{"user": map[string]string{"username": "ana"}, "password": "s3cret-pw"}, nil)
	if code := apiJSON(t, m, "PUT", "/api/v1/master/cluster_message", login.Token,
		resolute.SetClusterMessageRequest{Message: "The cluster goes down for maintenance at 18:00 UTC.", Duration: "2h"}, nil); code != 200 {
		t.Fatalf("set the message: %d", code)
	}
	for _, width := range []int{1280, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "ana", "s3cret-pw")
		banner := page.Locator("#cluster-message")
		must(t, expect(t, banner).ToHaveText("The cluster goes down for maintenance at 18:00 UTC."))
		must(t, expect(t, banner).ToBeVisible())
		for _, path := range []string{"/experiments", "/tasks", "/models"} {
			_, err := page.Goto(m.URL + path)
			must(t, err)
			must(t, expect(t, banner).ToBeVisible())
		}
		if width == 1280 {
			apiJSON(t, m, "DELETE", "/api/v1/master/cluster_message", login.Token, nil, nil)
			_, err := page.Reload()
			must(t, err)
			must(t, expect(t, page.Locator("h1")).ToBeVisible())
			must(t, expect(t, banner).ToHaveCount(0))
			apiJSON(t, m, "PUT", "/api/v1/master/cluster_message", login.Token,
				resolute.SetClusterMessageRequest{Message: "The cluster goes down for maintenance at 18:00 UTC."}, nil)
		}
	}
}

// TestTheUsagePageChartsAndTotalsWhatRan: Cluster → Usage, for a range of
// days, charts each user's, pool's and workspace's slot-hours per day and
// lists their totals.
func TestTheUsagePageChartsAndTotalsWhatRan(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var login resolute.LoginResponse
	apiJSON(t, m, "POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: "admin"}, &login)
	var created resolute.TaskResponse
	if code := apiJSON(t, m, "POST", "/api/v1/commands", login.Token, map[string]any{"entrypoint": []string{"true"}}, &created); code != 200 {
		t.Fatalf("run a command: %d", code)
	}
	id := created.Task.ID
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var tr resolute.TaskResponse
		apiJSON(t, m, "GET", "/api/v1/tasks/"+id, login.Token, nil, &tr)
		if tr.Task.State == resolute.TaskTerminated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still %s", id, tr.Task.State)
		}
	}
	// Two slots from 10:00 to 12:00 on the 1st and 20:00 to 22:00 on the 3rd.
	conn, err := pgx.Connect(t.Context(), m.DatabaseURL)
	must(t, err)
	defer conn.Close(t.Context())
	_, err = conn.Exec(t.Context(), `UPDATE allocations SET slots = 2, started_at = '2026-03-01T10:00:00Z', ended_at = '2026-03-01T12:00:00Z' WHERE task_id = $1`, id)
	must(t, err)
	_, err = conn.Exec(t.Context(), `INSERT INTO allocations (id, task_id, state, slots, token_hash, started_at, ended_at)
		VALUES ($1 || '.2', $1, 'TERMINATED', 2, 'x', '2026-03-03T20:00:00Z', '2026-03-03T22:00:00Z')`, id)
	must(t, err)

	page := browser.NewPage(t, 1280)
	seen := watchViolations(t, page)
	signIn(t, page, m.URL, "admin", "")
	must(t, navLink(page, "Cluster").Click())
	must(t, page.Locator("#usage-link").Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Usage"))
	must(t, page.GetByLabel("From").Fill("2026-03-01"))
	must(t, page.GetByLabel("To").Fill("2026-03-04"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Show"}).Click())
	must(t, expect(t, page.Locator("#usage-total")).ToContainText("8.00 slot-hours from 2026-03-01 to 2026-03-04"))
	must(t, expect(t, page.Locator("#usage-byUsername")).ToContainText("admin"))
	must(t, expect(t, page.Locator("#usage-byUsername")).ToContainText("8.00"))
	must(t, expect(t, page.Locator("#usage-byWorkspace")).ToContainText(resolute.DefaultWorkspaceName))
	for _, chart := range []string{"#usage-chart-byUsername", "#usage-chart-byResourcePool", "#usage-chart-byWorkspace"} {
		must(t, expect(t, page.Locator(chart+" canvas").First()).ToBeVisible())
	}
	must(t, expect(t, page.Locator("#usage-charts .chart-legend")).ToContainText("admin"))
	must(t, page.Locator("#usage-chart-byUsername .u-over").Hover())
	must(t, expect(t, page.Locator("#usage-chart-byUsername .chart-tip")).ToBeVisible())
	seen.check(t, page, "the usage page and its charts")

	// A range that ends before it starts says why.
	_, err = page.Goto(m.URL + "/cluster/usage?start=2026-03-04&end=2026-03-01")
	must(t, err)
	must(t, expect(t, page.Locator("#usage-error")).ToContainText("is before start_date"))
}
