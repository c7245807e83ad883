package e2e

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestTheTensorBoardButtonOfAnExperiment clicks TensorBoard on an
// experiment's page and lands on the new TensorBoard's task page. This
// machine has no tensorboard program (it ships on PyPI only), so the
// TensorBoard ends at once, its page says it ended (not that it opens once
// ready) and its log says why; the handler tests serve
// one through the proxy with a stand-in program.
func TestTheTensorBoardButtonOfAnExperiment(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := context.Background()
	login, err := client.New(m.URL).Login(ctx, "admin", "")
	must(t, err)
	paused := false
	e, err := client.New(m.URL, client.WithToken(login.Token)).CreateExperiment(ctx, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: "name: tb\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n"},
		Activate:                &paused}, nil, 0, nil)
	must(t, err)
	id := strconv.FormatInt(e.Experiment.ID, 10)

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	_, err = page.Goto(m.URL + "/experiments/" + id)
	must(t, err)
	screenshot(t, page, "experiment-tensorboard-button")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "TensorBoard", Exact: playwright.Bool(true)}).Click())

	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/tasks/tensorboard-\d+$`)))
	must(t, expect(t, page.Locator("#flash")).ToContainText("Launched tensorboard-"))
	must(t, expect(t, page.Locator("#task-live h1")).ToContainText("TensorBoard (experiment "+id+")"))
	must(t, expect(t, page.Locator("#task-log-lines")).ToContainText("tensorboard is not installed",
		playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(20000)}))
	// What the page says of it is its real state: ended, not "opens once ready".
	must(t, expect(t, page.Locator("#task-status")).ToHaveText("TensorBoard has ended; its log below says why.",
		playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(20000)}))
	must(t, expect(t, page.Locator("body")).Not().ToContainText("opens once"))
	screenshot(t, page, "task-tensorboard")
}
