package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestComparingTwoExperimentsFromTheList ticks two experiments on the list,
// compares them, and reads their chart and the hyperparameter that differs,
// on a phone.
func TestComparingTwoExperimentsFromTheList(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	var ids, trials []string
	for i, lr := range []string{"0.1", "0.01"} {
		e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
			ConfigYAML: "name: cmp" + strconv.Itoa(i) + "\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n" +
				"hyperparameters: {lr: " + lr + ", batch_size: 32}\n"})
		must(t, err)
		ids = append(ids, strconv.FormatInt(e.ID, 10))
		tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100+i, resolute.StateActive, []byte("{}"), 1)
		must(t, err)
		trials = append(trials, strconv.FormatInt(tr.ID, 10))
		var reports []resolute.MetricsReport
		for step := int64(10); step <= 30; step += 10 {
			reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: step, Group: "validation",
				Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %g}}`, float64(i+1)/float64(step)))})
		}
		must(t, m.DB.InsertMetrics(t.Context(), reports))
	}

	page := browser.NewPage(t, 390)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = page.Goto(m.URL + "/experiments")
	must(t, err)
	for _, id := range ids {
		must(t, page.Locator("#select-"+id).Check())
	}
	// The list's poll (every 3 s) keeps what was ticked.
	page.WaitForTimeout(3500)
	for _, id := range ids {
		must(t, expect(t, page.Locator("#select-"+id)).ToBeChecked())
	}
	must(t, page.Locator("#compare-button").Click())

	chart := page.Locator("#experiment-chart")
	must(t, expect(t, chart.Locator(".uplot canvas")).ToBeVisible())
	must(t, expect(t, chart.Locator(".chart-legend")).ToContainText("exp "+ids[1]+" / trial"))
	must(t, expect(t, page.Locator("#compare-name")).ToContainText("cmp1"))
	lr := page.Locator(`[id="config-hyperparameters.lr.val"]`)
	must(t, expect(t, lr).ToContainText("0.01"))
	must(t, expect(t, page.Locator(`[id="config-hyperparameters.batch_size.val"]`)).ToHaveCount(0))
	noWiderThan(t, page, 390)
	screenshot(t, page, "phone-compare")

	// Trials compare too, charted alone.
	_, err = page.Goto(m.URL + "/compare?trials=" + trials[0] + "," + trials[1])
	must(t, err)
	must(t, expect(t, chart.Locator(".chart-legend")).ToContainText("exp "+ids[1]+" / trial "+trials[1]))
	must(t, expect(t, chart.Locator(".chart-legend li")).ToHaveCount(2))
}
