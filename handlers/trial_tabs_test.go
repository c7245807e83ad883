package handlers_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

func TestEachTrialTabIsItsOwnURLAndShowsOnlyItsPart(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[0]
	base := "/trials/" + itoa(tr.ID)
	for name, tc := range map[string]struct {
		query       string
		want, avoid []string
	}{
		"the overview shows charts, latest metrics and runs": {"", []string{`id="trial-tabs"`, `id="tab-overview" href="` + base + `" aria-current="page"`,
			`id="trial-charts"`, `id="validation-metrics"`, `id="training-metrics"`, `id="allocations"`}, []string{`id="hparams"`, `id="checkpoints"`, `id="trial-log-lines"`}},
		"the hyperparameters tab lists them": {"?tab=hyperparameters", []string{`id="hparams"`, "<th>lr</th>", `aria-current="page">Hyperparameters`},
			[]string{`id="trial-charts"`, `id="validation-metrics"`}},
		"the checkpoints tab lists them": {"?tab=checkpoints", []string{`id="checkpoints"`, "2.0 KiB", `id="checkpoint-range"`, "1–1 of 1"},
			[]string{`id="hparams"`, `id="checkpoints-older"`}},
		"the logs tab follows the log": {"?tab=logs", []string{`id="trial-log-lines"`, `name="tab" value="logs"`, `id="trial-log-download"`},
			[]string{`id="validation-metrics"`}},
		"the metadata tab says when there is none": {"?tab=metadata", []string{`id="run-metadata"`, "set no metadata"}, []string{`id="hparams"`}},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, c, f.m, base+tc.query)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", tc.query, resp.StatusCode)
			}
			wants(t, tc.query, body, tc.want...)
			for _, a := range tc.avoid {
				if strings.Contains(body, a) {
					t.Errorf("%s shows %s", tc.query, a)
				}
			}
			if tc.query != "" && !strings.Contains(body, `href="`+base+`">Trial `+itoa(tr.ID)+`</a>`) {
				t.Errorf("%s: the breadcrumbs lead back to the trial's overview", tc.query)
			}
		})
	}
	if resp, _ := get(t, c, f.m, base+"?tab=nonsense"); resp.StatusCode != 400 {
		t.Errorf("an unknown tab: %d", resp.StatusCode)
	}
	_, body := get(t, c, f.m, base+"/live?tab=hyperparameters")
	wants(t, "the live fragment of a tab", body, `id="trial-live"`, `id="hparams"`, `hx-get="`+base+`/live?tab=hyperparameters"`)
}

func TestTheSystemTabIsOfferedOnlyOnceTheTrialReportedSystemMetrics(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[1]
	base := "/trials/" + itoa(tr.ID)
	if _, body := get(t, c, f.m, base); strings.Contains(body, `id="tab-system"`) {
		t.Error("a trial without system metrics offers their tab")
	}
	if resp, _ := get(t, c, f.m, base+"?tab=system"); resp.StatusCode != 404 {
		t.Errorf("the system tab of a trial without them: %d", resp.StatusCode)
	}
	if _, err := f.m.DB.InsertSystemMetrics(t.Context(), []resolute.SystemMetricsReport{{TrialID: tr.ID, TrialRunID: 1, Group: "cpu", AgentID: "agent-1",
		ReportedAt: time.Now(), Metrics: json.RawMessage(`{"cpu_util_simple": 50}`)}}); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, c, f.m, base)
	wants(t, "the overview", body, `id="tab-system"`)
	resp, body := get(t, c, f.m, base+"?tab=system")
	if resp.StatusCode != 200 {
		t.Fatalf("the system tab: %d", resp.StatusCode)
	}
	wants(t, "the system tab", body, `id="system-charts"`)
}

func TestTheCheckpointsTabPagesOnTheServerLatestFirst(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[2]
	// The fixture's checkpoint is at step 10; add 44 more at steps 11–54:
	// 45 in all.
	for step := 11; step <= 54; step++ {
		uuid := fmt.Sprintf("00000%03d-0000-4000-8000-%012d", step, tr.ID)
		if err := f.m.DB.CreateCheckpoint(t.Context(), resolute.Checkpoint{UUID: uuid, TrialID: tr.ID, ExperimentID: f.e.ID, AllocationID: tr.TaskID() + ".1",
			TaskID: tr.TaskID(), StepsCompleted: int64(step), State: "COMPLETED", Resources: map[string]int64{"state": 1}, Size: 1, Metadata: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	base := "/trials/" + itoa(tr.ID) + "?tab=checkpoints"
	rows := func(body string) int {
		i := strings.Index(body, `id="checkpoints"`)
		j := strings.Index(body[i:], "</table>")
		return strings.Count(body[i:i+j], "<tr")
	}
	for _, tc := range []struct {
		query, first, last, span string
		rows                     int
		newer, older             bool
	}{
		{"", "00000054-", "00000035-", "1–20 of 45", 20, false, true},
		{"&page=2", "00000034-", "00000015-", "21–40 of 45", 20, true, true},
		{"&page=3", "00000014-", "00000002-0000-4000-8000-000000000000", "41–45 of 45", 5, true, false},
	} {
		resp, body := get(t, c, f.m, base+tc.query)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", tc.query, resp.StatusCode)
		}
		if n := rows(body) - 1; n != tc.rows {
			t.Errorf("%s shows %d checkpoints, want %d", tc.query, n, tc.rows)
		}
		wants(t, tc.query, body, tc.span, tc.first, tc.last)
		if strings.Index(body, tc.first) > strings.Index(body, tc.last) {
			t.Errorf("%s: %s comes after %s; want the latest first", tc.query, tc.first, tc.last)
		}
		if got := strings.Contains(body, `id="checkpoints-newer"`); got != tc.newer {
			t.Errorf("%s: a link to newer ones: %v, want %v", tc.query, got, tc.newer)
		}
		if got := strings.Contains(body, `id="checkpoints-older"`); got != tc.older {
			t.Errorf("%s: a link to older ones: %v, want %v", tc.query, got, tc.older)
		}
	}
	_, body := get(t, c, f.m, base+"&page=2")
	wants(t, "page 2", body, `href="/trials/`+itoa(tr.ID)+`?tab=checkpoints&amp;page=3" rel="next"`, `href="/trials/`+itoa(tr.ID)+`?tab=checkpoints" rel="prev"`)
	_, body = get(t, c, f.m, "/trials/"+itoa(tr.ID)+"/live?tab=checkpoints&page=2")
	wants(t, "page 2's live fragment", body, "21–40 of 45")
	for query, status := range map[string]int{"&page=0": 400, "&page=x": 400, "&page=99999999999": 400, "&page=4": 404} {
		if resp, _ := get(t, c, f.m, base+query); resp.StatusCode != status {
			t.Errorf("%s: %d, want %d", query, resp.StatusCode, status)
		}
	}
}

func TestTheOverviewShowsTheLastTenReportsOfEachGroupInStepOrder(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	tr := f.trials[3]
	var reports []resolute.MetricsReport
	for step := 20; step <= 300; step += 10 { // 29 more after the fixture's step 10
		reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: int64(step), Group: "validation",
			Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %d}}`, step))})
	}
	if err := f.m.DB.InsertMetrics(t.Context(), reports); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, c, f.m, "/trials/"+itoa(tr.ID))
	i, j := strings.Index(body, `id="validation-metrics"`), strings.Index(body, `id="training-metrics"`)
	table := body[i:j]
	steps := regexp.MustCompile(`<tr><td>(\d+)</td>`).FindAllStringSubmatch(table, -1)
	var got []string
	for _, s := range steps {
		got = append(got, s[1])
	}
	if want := "210 220 230 240 250 260 270 280 290 300"; strings.Join(got, " ") != want {
		t.Errorf("the overview's validation reports are at steps %v, want %s", got, want)
	}
}
