package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestLogFiltersShowALevelAndAboveOneTrialAndSayWhyNothingMatches: the
// experiment's logs tab reads a level as "this level and above", narrows to
// one of its trials, shows each line's level once, and says which filter
// matched nothing instead of "No output yet.".
func TestLogFiltersShowALevelAndAboveOneTrialAndSayWhyNothingMatches(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	first, second := f.trials[0], f.trials[1]
	if err := f.m.DB.InsertTaskLogs(t.Context(), []resolute.TaskLog{
		{TaskID: first.TaskID(), AllocationID: first.TaskID() + ".1", Time: time.Now(), Level: "INFO", Log: "INFO: [41] determined.core: loading the data\n"},
		{TaskID: first.TaskID(), AllocationID: first.TaskID() + ".1", Time: time.Now(), Level: "DEBUG", Log: "DEBUG: [41] determined.core: a detail\n"},
	}); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		query     string
		want, not []string
	}{
		"DEBUG and a search show the INFO lines that match": {"&level=DEBUG&search=loading",
			[]string{"INFO [41] determined.core: loading the data"}, []string{"No line matches", "a detail"}},
		"the level word is shown once": {"",
			[]string{"INFO [41] determined.core: loading the data"}, []string{"INFO INFO:", "INFO: [41]"}},
		"INFO and above hides DEBUG and shows ERROR": {"&level=INFO",
			[]string{"loading the data", "trial 2 &lt;b&gt;fails"}, []string{"a detail"}},
		"ERROR and above hides INFO": {"&level=ERROR",
			[]string{"trial 2 &lt;b&gt;fails"}, []string{"says hello"}},
		"one trial's lines only": {"&trial=" + itoa(second.ID),
			[]string{"trial 1 says hello", `<option value="` + itoa(second.ID) + `" selected>`}, []string{"trial 0 says hello", "trial 2 says hello"}},
		"nothing matching says which filter matched nothing": {"&level=DEBUG&search=nowhere",
			[]string{`id="experiment-log-empty"`, "No line matches level ≥ DEBUG and &#34;nowhere&#34;."}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, c, f.m, f.path("?tab=logs"+tc.query))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			i := strings.Index(body, `id="log-filter"`)
			if i < 0 {
				t.Fatalf("no log:\n%.500s", body)
			}
			log := body[i:]
			wants(t, "the logs tab", log, tc.want...)
			for _, n := range tc.not {
				if strings.Contains(log, n) {
					t.Errorf("the logs tab shows %q", n)
				}
			}
		})
	}
	if resp, body := get(t, c, f.m, f.path("/logs/lines?after=0&trial=999999")); resp.StatusCode != 400 || !strings.Contains(body, "has no trial 999999") {
		t.Errorf("another experiment's trial: %d %.200s", resp.StatusCode, body)
	}
	// The download reads the same way.
	_, body := get(t, c, f.m, f.path("/logs/download?level=DEBUG&search=loading"))
	if !strings.Contains(body, "INFO [41] determined.core: loading the data") || strings.Contains(body, "INFO INFO") {
		t.Errorf("download:\n%s", body)
	}
}

// TestTheMasterLogPageFiltersByLevelAndText: /logs reads a level as "this
// level and above", searches in any case, follows under the same filter,
// and says when nothing matches.
func TestTheMasterLogPageFiltersByLevelAndText(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	m.Logs.Add(time.Now(), "WARN", "disk almost FULL on the checkpoint volume")
	m.Logs.Add(time.Now(), "INFO", "a quiet line about the disk")
	m.Logs.Add(time.Now(), "DEBUG", "a debug line about the disk")
	c := signInPages(t, m, "admin", "")
	_, body := get(t, c, m, "/logs?level=WARNING&search=full")
	wants(t, "the filtered page", body, `id="log-filter"`, "disk almost FULL", `/logs/lines?after=`, `level=WARNING`, `search=full`)
	if strings.Contains(body, "a quiet line") {
		t.Error("WARNING and above shows an INFO line")
	}
	_, body = get(t, c, m, "/logs?level=DEBUG&search=disk")
	wants(t, "DEBUG and above", body, "disk almost FULL", "a quiet line about the disk", "a debug line about the disk")
	_, body = get(t, c, m, "/logs?level=ERROR&search=disk")
	wants(t, "nothing matching", body, "No line matches level ≥ ERROR and &#34;disk&#34;.")

	// A follower gets only new lines under its filter, and moves past the rest.
	_, body = get(t, c, m, "/logs?level=WARNING&search=full")
	m.Logs.Add(time.Now(), "ERROR", "the disk is FULL")
	m.Logs.Add(time.Now(), "INFO", "FULL of INFO")
	after := body[strings.Index(body, "/logs/lines?after=")+len("/logs/lines?after="):]
	after = after[:strings.IndexAny(after, "&\"")]
	_, body = get(t, c, m, "/logs/lines?after="+after+"&level=WARNING&search=full")
	wants(t, "the follower", body, "the disk is FULL")
	if strings.Contains(body, "FULL of INFO") || strings.Contains(body, "disk almost FULL") {
		t.Errorf("the follower got lines outside its filter or again:\n%s", body)
	}
	if resp, _ := get(t, c, m, "/logs?level=LOUD"); resp.StatusCode != 400 {
		t.Errorf("an unknown level: %d", resp.StatusCode)
	}
}
