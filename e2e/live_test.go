package e2e

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAnExperimentsPageIsPushedItsChanges opens a paused experiment's page,
// changes the experiment's state through the API, and sees the header
// follow within 2 s, while the page asks for its live region only when the
// server said something it shows changed: it no longer polls.
func TestAnExperimentsPageIsPushedItsChanges(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: pushed
entrypoint: sleep 30
searcher: {name: single, metric: loss}
`})
	must(t, err)
	login, err := client.New(m.URL).Login(t.Context(), "admin", "")
	must(t, err)
	api := client.New(m.URL, client.WithToken(login.Token))

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))

	liveURL := "/experiments/" + strconv.FormatInt(e.ID, 10) + "/live"
	var mu sync.Mutex
	fetches := 0
	page.OnRequest(func(r playwright.Request) {
		if strings.Contains(r.URL(), liveURL) {
			mu.Lock()
			fetches++
			mu.Unlock()
		}
	})
	fetched := func() int {
		mu.Lock()
		defer mu.Unlock()
		return fetches
	}
	streaming := make(chan struct{}, 1)
	page.OnResponse(func(r playwright.Response) {
		if u, err := url.Parse(r.URL()); err == nil && u.Path == "/events" && r.Status() == 200 {
			select {
			case streaming <- struct{}{}:
			default:
			}
		}
	})
	_, err = page.Goto(m.URL + "/experiments/" + strconv.FormatInt(e.ID, 10))
	must(t, err)
	state := page.Locator("#experiment-header h1 .state")
	must(t, expect(t, state).ToHaveText("PAUSED"))
	select {
	case <-streaming:
	case <-time.After(10 * time.Second):
		t.Fatal("the page opened no stream of events")
	}
	// The topics the page was told of, as app.js dispatches them.
	_, err = page.Evaluate(`window.topics = [];
		document.body.addEventListener("live", (e) => window.topics.push(e.detail.topic))`)
	must(t, err)

	// Nothing changes, nothing is asked for (it used to poll every 3 s).
	page.WaitForTimeout(4000)
	if n := fetched(); n != 0 {
		t.Fatalf("the page asked for its live region %d times while nothing changed", n)
	}

	// Changes through the API show within 2 s.
	within := playwright.NewPlaywrightAssertions(2000)
	must(t, api.ExperimentAction(t.Context(), e.ID, "activate"))
	must(t, within.Locator(state).ToHaveText("ACTIVE"))
	must(t, api.ExperimentAction(t.Context(), e.ID, "pause"))
	must(t, within.Locator(state).ToHaveText("PAUSED"))

	// Every fetch of the region followed an event of a topic it shows.
	page.WaitForTimeout(1000) // let the last events' fetches finish
	got, err := page.Evaluate(`window.topics`)
	must(t, err)
	told := 0
	for _, topic := range got.([]any) {
		if topic == "experiment:"+strconv.FormatInt(e.ID, 10) {
			told++
		}
	}
	if n := fetched(); n < 2 || n > told {
		t.Errorf("%d fetches of the live region for %d events of its topics (%v)", n, told, got)
	}

	// A change told while the region is being fetched is not lost: the
	// region is fetched again once that response is in. (Its responses
	// are held back here, so the second rename arrives meanwhile.)
	must(t, page.Route(regexp.MustCompile(regexp.QuoteMeta(liveURL)), func(r playwright.Route) {
		go func() {
			resp, err := r.Fetch()
			if err != nil {
				r.Abort()
				return
			}
			time.Sleep(1500 * time.Millisecond)
			r.Fulfill(playwright.RouteFulfillOptions{Response: resp})
		}()
	}))
	one, two := "renamed once", "renamed twice"
	_, err = api.PatchExperiment(t.Context(), e.ID, resolute.PatchExperimentRequest{Name: &one})
	must(t, err)
	time.Sleep(300 * time.Millisecond)
	_, err = api.PatchExperiment(t.Context(), e.ID, resolute.PatchExperimentRequest{Name: &two})
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(6000).Locator(page.Locator("#experiment-header h1")).ToContainText(two))
}
