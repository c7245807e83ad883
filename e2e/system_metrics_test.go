package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// profiledTrial says what it is about (run metadata) and trains slowly for
// up to a minute; its config turns the profiler on, so the harness samples
// the machine every second and reports every ten.
const profiledTrial = `import time
import determined as det

with det.core.init() as core_context:
    core_context.train.set_metadata({"dataset": "digits", "rows": 1797, "notes": ["profiled"]})
    for step in range(1, 601):
        core_context.train.report_training_metrics(step, {"loss": 1.0 / step})
        if core_context.preempt.should_preempt():
            break
        time.sleep(0.1)
`

// apiJSON calls the master's API with a user's token.
func apiJSON(t *testing.T, m *handlerstest.Master, method, path, token string, body, out any) int {
	t.Helper()
	var in bytes.Buffer
	if body != nil {
		must(t, json.NewEncoder(&in).Encode(body))
	}
	req, _ := http.NewRequest(method, m.URL+path, &in) // also in Cleanup, after t.Context ends
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if out != nil {
		must(t, json.NewDecoder(resp.Body).Decode(out))
	}
	return resp.StatusCode
}

// TestATrialsPageShowsItsSystemMetricsAndMetadata runs a real trial with
// profiling.enabled that sets its run metadata, opens its page before any
// sample is in, and watches the System metrics panel draw the samples the
// profiler reports (pushed to the page as they arrive) next to the
// metadata the trial set.
func TestATrialsPageShowsItsSystemMetricsAndMetadata(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var login resolute.LoginResponse
	if code := apiJSON(t, m, "POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: "admin"}, &login); code != 200 {
		t.Fatalf("login: %d", code)
	}
	token := login.Token
	cfg := "name: profiled\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n" +
		"profiling: {enabled: true}\nmax_restarts: 0\nresources: {slots_per_trial: 0}\n"
	var created resolute.ExperimentResponse
	code := apiJSON(t, m, "POST", "/api/v1/experiments", token, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg},
		ContextTgz:              packFiles(t, map[string]string{"train.py": profiledTrial})}, &created)
	if code != 200 {
		t.Fatalf("create: %d", code)
	}
	t.Cleanup(func() {
		apiJSON(t, m, "POST", "/api/v1/experiments/"+strconv.FormatInt(created.Experiment.ID, 10)+"/kill", token, nil, nil)
	})
	var trials resolute.TrialsResponse
	apiJSON(t, m, "GET", "/api/v1/experiments/"+strconv.FormatInt(created.Experiment.ID, 10)+"/trials", token, nil, &trials)
	if len(trials.Trials) != 1 {
		t.Fatalf("trials: %+v", trials)
	}
	trialID := trials.Trials[0].ID

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err := page.Goto(m.URL + "/trials/" + strconv.FormatInt(trialID, 10))
	must(t, err)
	// The config asks for profiling: the tab and its panel are there from
	// the start.
	must(t, page.Locator("#tab-system").Click())
	must(t, expect(t, page.Locator("#system-metrics h2")).ToContainText("System metrics"))
	for _, g := range []string{"cpu", "memory", "disk", "network"} {
		must(t, expect(t, page.Locator("#system-"+g)).ToBeVisible())
	}

	// The first report comes after ten samples a second apart, once the
	// trial has started: allow for a loaded machine.
	slow := playwright.NewPlaywrightAssertions(120000)
	cpu := page.Locator("#system-cpu")
	must(t, slow.Locator(cpu.Locator(".uplot canvas")).ToBeVisible())
	legend := page.Locator("#system-charts .chart-legend")
	must(t, expect(t, legend).ToContainText("cpu_util_simple"))
	must(t, slow.Locator(legend).ToContainText("memory_free"))
	must(t, slow.Locator(legend).ToContainText("disk_util (/)"))
	must(t, slow.Locator(legend).ToContainText("net_throughput_recv"))
	screenshot(t, page, "trial-system-metrics")

	// The next report joins the chart without a reload: the page is told
	// system-metrics:<id> and the chart fetches its group again.
	before, err := cpu.GetAttribute("data-points")
	must(t, err)
	must(t, slow.Locator(cpu).Not().ToHaveAttribute("data-points", before))

	// The metadata the trial set, on its tab once the live region refreshes.
	must(t, page.Locator("#tab-metadata").Click())
	must(t, slow.Locator(page.Locator("#run-metadata")).ToContainText(`"dataset": "digits"`))
	must(t, expect(t, page.Locator("#run-metadata")).ToContainText(`"rows": 1797`))

	// What the page charts is what the API serves.
	var served resolute.MetricsResponse
	apiJSON(t, m, "GET", "/api/v1/trials/"+strconv.FormatInt(trialID, 10)+"/metrics?group=cpu", token, nil, &served)
	if len(served.Metrics) < 2 {
		t.Fatalf("the API serves %d cpu reports", len(served.Metrics))
	}
	var md resolute.RunMetadataResponse
	apiJSON(t, m, "GET", "/api/v1/runs/"+strconv.FormatInt(trialID, 10)+"/metadata", token, nil, &md)
	var got map[string]any
	must(t, json.Unmarshal(md.Metadata, &got))
	if got["dataset"] != "digits" || got["rows"] != 1797.0 {
		t.Errorf("GET /api/v1/runs/%d/metadata: %s", trialID, md.Metadata)
	}
}
