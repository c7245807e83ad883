package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// eventTopicsOf opens GET /events?query with c and sends each change's
// topic on the channel it returns, until the test ends.
func eventTopicsOf(t *testing.T, c *http.Client, m *handlerstest.Master, query string) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", m.URL+"/events?"+query, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	out := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if topic, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				out <- topic
			}
		}
	}()
	return out
}

// postMetrics reports one training report of trial through the task API.
func postMetrics(t testing.TB, m *handlerstest.Master, trialID int64, taskToken string, step int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"group": "training", "metrics": map[string]any{
		"trial_id": trialID, "trial_run_id": 0, "steps_completed": step,
		"metrics": map[string]any{"avg_metrics": map[string]float64{"loss": 1 / float64(step)}}}})
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/trials/%d/metrics", m.URL, trialID), bytes.NewReader(body))
	req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+taskToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("report of trial %d: %d", trialID, resp.StatusCode)
	}
}

func TestAPageShowingATrialIsNotToldOfAnotherTrialsReports(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	a, tokenA := runningTrial(t, m, token)
	b, tokenB := runningTrial(t, m, token)
	pages := signInPages(t, m, "admin", "")
	topicA := live.Object("trial", a)
	topics := eventTopicsOf(t, pages, m, "topics="+topicA+",experiments")
	// What the trials' creation told may reach the stream after it opened:
	// a report of trial A, told after it, marks where that ends, and the
	// page then hears nothing for a while.
	postMetrics(t, m, a, tokenA, 1)
	for barrier := time.After(10 * time.Second); ; {
		select {
		case topic := <-topics:
			if topic != topicA {
				continue
			}
		case <-barrier:
			t.Fatalf("not told of %s's first report", topicA)
		}
		break
	}
	for quiet := false; !quiet; {
		select {
		case <-topics:
		case <-time.After(time.Second): // on a loaded machine trial A's own news may come late
			quiet = true
		}
	}
	for range 3 {
		postMetrics(t, m, b, tokenB, 1)
	}
	deadline := time.After(time.Second)
	for quiet := false; !quiet; {
		select {
		case topic := <-topics:
			t.Errorf("a page of %s was told %s when trial %d reported", topicA, topic, b)
		case <-deadline:
			quiet = true
		}
	}
	postMetrics(t, m, a, tokenA, 2)
	select {
	case topic := <-topics:
		if topic != topicA {
			t.Errorf("told %s, want %s", topic, topicA)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("not told of %s's report", topicA)
	}
}

func TestEventsRefusesABadTopic(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	pages := signInPages(t, m, "admin", "")
	resp, err := pages.Get(m.URL + "/events?topics=trial:1,bad%0Atopic")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "topics") {
		t.Errorf("a bad topic: %d %s", resp.StatusCode, body)
	}
}
