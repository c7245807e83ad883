package handlers_test

import (
	"bufio"
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/live"
)

// openEvents opens GET /events?query with c and returns a function reading the
// next change's topic.
func openEvents(t *testing.T, c *http.Client, m *handlerstest.Master, lastEventID, query string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", m.URL+"/events?"+query, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	return func() string {
		t.Helper()
		event := ""
		for lines.Scan() {
			switch line := lines.Text(); {
			case line == "event: change":
				event = "change"
			case event == "change" && strings.HasPrefix(line, "data: "):
				return strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the stream ended: %v", lines.Err())
		return ""
	}
}

func TestTheEventsStreamAnnouncesAChangeMadeThroughTheAPI(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	next := openEvents(t, signInPages(t, m, "admin", ""), m, "", "")

	if code := api(t, m, "POST", "/api/v1/workspaces", admin, `{"name":"pushed"}`, nil); code != 200 {
		t.Fatalf("create workspace: %d", code)
	}
	for topic := next(); topic != "workspaces"; topic = next() {
		// Other tables may change meanwhile (the scheduler, the log).
	}
}

func TestAReconnectingBrowserIsToldEveryTopicChanged(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	next := openEvents(t, signInPages(t, m, "admin", ""), m, "41", "")
	var got []string
	for len(got) < len(live.Topics)+1 {
		got = append(got, next())
	}
	for _, want := range append(slices.Clone(live.Topics), live.MasterLogs) {
		if !slices.Contains(got, want) {
			t.Errorf("no %s among %v", want, got)
		}
	}
}

func TestTheEventsStreamIsForSignedInUsers(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(m.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Errorf("GET /events without a session: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestAPageIsToldWhatChangedWhileItLoaded(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	pages := signInPages(t, m, "admin", "")
	_, body := get(t, pages, m, "/dashboard")
	since := regexp.MustCompile(`data-live-since="(\d+)"`).FindStringSubmatch(body)
	if since == nil {
		t.Fatal("no data-live-since on the page")
	}
	if code := api(t, m, "POST", "/api/v1/workspaces", admin, `{"name":"meanwhile"}`, nil); code != 200 {
		t.Fatalf("create workspace: %d", code)
	}
	time.Sleep(500 * time.Millisecond) // the listener hears of it before the stream opens
	next := openEvents(t, pages, m, "", "since="+since[1])
	for topic := next(); topic != "workspaces"; topic = next() {
	}
}
