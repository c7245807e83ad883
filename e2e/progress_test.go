package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// progressTrial reports its hyperparameter p as its progress through the
// harness and keeps running until it is killed.
const progressTrial = `
name: progressing
entrypoint: >-
  python3 -c "import time, determined as det;
  ctx = det.core.init().__enter__();
  ctx.train.report_progress(det.get_cluster_info().trial.hparams['p']);
  time.sleep(600)"
hyperparameters: {p: {type: categorical, vals: [0.32, 0.45]}}
searcher: {name: grid, metric: loss, max_concurrent_trials: 2}
`

// TestARunningExperimentsProgressIsItsTrials: two grid trials that report
// 32% and 45% while they still run put their experiment at the mean of the
// two (it read 0% until they finished), and the dashboard, the list, the
// header, the API and det all read that same number, with a time left.
func TestARunningExperimentsProgressIsItsTrials(t *testing.T) {
	const password = "progress-pw"
	m := handlerstest.Start(t, handlerstest.Options{Slots: 2, InitialPassword: password})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{ConfigYAML: progressTrial})
	must(t, err)
	t.Cleanup(func() { m.Experiments.SetState(t.Context(), authz.User(admin.User), e.ID, "kill") })

	// Wait on what the trials report, as the master stores it.
	deadline := time.Now().Add(90 * time.Second)
	var trials []resolute.Trial
	for {
		trials, err = m.DB.Trials(t.Context(), e.ID)
		must(t, err)
		if len(trials) == 2 && trials[0].Progress > 0 && trials[1].Progress > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trials did not report progress: %+v", trials)
		}
		time.Sleep(200 * time.Millisecond) // polling the database: no event reaches the test
	}
	for _, tr := range trials {
		if resolute.Terminal(tr.State) {
			t.Fatalf("trial %d ended: the progress must be read while it runs", tr.ID)
		}
	}
	want := resolute.FormatProgress((trials[0].Progress + trials[1].Progress) / 2) // grid: two points
	if want != "38.5%" {
		t.Fatalf("the trials reported %v and %v", trials[0].Progress, trials[1].Progress)
	}
	login, err := client.New(m.URL).Login(t.Context(), "admin", password)
	must(t, err)
	got, err := client.New(m.URL, client.WithToken(login.Token)).Experiment(t.Context(), e.ID)
	must(t, err)
	if api := resolute.FormatProgress(got.Progress); api != want {
		t.Errorf("the API's progress reads %s, want %s", api, want)
	}
	det := newDetCLI(t, m, password)
	for _, args := range [][]string{{"experiment", "list"}, {"experiment", "describe", strconv.FormatInt(e.ID, 10)}} {
		if out := det.run(t, "", args...); !strings.Contains(out, want) {
			t.Errorf("det %s does not show %s:\n%s", strings.Join(args, " "), want, out)
		}
	}

	for _, width := range []int{1440, 390} {
		page := browser.NewPage(t, width)
		signIn(t, page, m.URL, "admin", password)
		id := strconv.FormatInt(e.ID, 10)

		_, err = page.Goto(m.URL + "/experiments/" + id)
		must(t, err)
		must(t, expect(t, page.Locator("#experiment-progress-text")).ToHaveText(want))
		must(t, expect(t, page.Locator("#experiment-time-left")).ToContainText("left"))
		screenshot(t, page, fmt.Sprintf("progress-header-%d", width))

		_, err = page.Goto(m.URL + "/experiments")
		must(t, err)
		row := page.Locator("tr").Filter(playwright.LocatorFilterOptions{HasText: "progressing"})
		must(t, expect(t, row.Locator(".progress-text")).ToHaveText(want))

		_, err = page.Goto(m.URL + "/")
		must(t, err)
		must(t, expect(t, page.Locator(".progress-text").First()).ToHaveText(want))
	}
}
