package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

func TestTheTrialsTabIsATableOfRunsThatHidesSharedHyperparameters(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	ctx := t.Context()
	admin, err := f.m.DB.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: shared
entrypoint: sleep 30
hyperparameters:
  lr: {type: double, minval: 0.001, maxval: 0.1}
  batch: 32
searcher: {name: random, metric: loss, max_trials: 3, max_length: 10}
`})
	if err != nil {
		t.Fatal(err)
	}
	// The random searcher's three trials: lr differs, batch is the same.
	trials, err := f.m.DB.Trials(ctx, e.ID)
	if err != nil || len(trials) != 3 {
		t.Fatalf("%d trials: %v", len(trials), err)
	}
	if err := f.m.DB.SetTrialEarlyExit(ctx, trials[1].ID, control.EarlyExitInvalidHP); err != nil {
		t.Fatal(err)
	}
	if err := f.m.DB.SetTrialState(ctx, trials[1].ID, resolute.StateCompleted); err != nil {
		t.Fatal(err)
	}
	path := "/experiments/" + itoa(e.ID)

	_, body := get(t, c, f.m, path+"?tab=trials")
	wants(t, "the trials tab", body, `id="constant-hparams"`, "<code>batch=32</code>", `id="show-constant"`,
		`id="sort-hp.lr">lr</a>`, `id="sort-started">Started</a>`, `id="sort-ended">Ended</a>`, `id="sort-duration">Duration</a>`, `id="col-hp.batch"`, "batch (= 32 for all)",
		`<span class="tag bad marker" title="EXITED_REASON_INVALID_HP">stopped: invalid hyperparameters</span>`)
	if strings.Contains(body, `id="sort-hp.batch"`) {
		t.Error("the trials tab shows a column every trial has the same")
	}
	if strings.Contains(body, `id="col-hp.batch" checked`) {
		t.Error("the chooser ticks the hidden constant column")
	}
	if n := strings.Count(body, "stopped: invalid hyperparameters"); n != 1 {
		t.Errorf("%d trials are marked as stopped for invalid hyperparameters, want 1", n)
	}
	row := body[strings.Index(body, `id="trials-`+itoa(trials[1].ID)+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	if regexp.MustCompile(`<td>–</td>`).MatchString(row) {
		t.Errorf("the ended trial's row has no end: %s", row)
	}

	// "Show as columns" asks for the shown columns and the constant one;
	// the URL keeps the order, and the poll asks for the same.
	show := regexp.MustCompile(`href="([^"]*)" id="show-constant"`).FindStringSubmatch(body)
	if show == nil || !strings.Contains(show[1], "cols=state%2Chp.batch%2Chp.lr%2Cbest") {
		t.Fatalf("show-constant link: %v", show)
	}
	_, body = get(t, c, f.m, path+"?cols=state%2Chp.batch%2Chp.lr%2Cbest%2Csteps%2Crestarts%2Ccheckpoints%2Cstarted%2Cended%2Cduration&order=desc&sort=duration&tab=trials")
	wants(t, "every hyperparameter", body, `id="sort-hp.batch"`, `id="col-hp.batch" checked`, `id="default-columns"`,
		`href="/experiments/`+itoa(e.ID)+`?order=desc&amp;sort=duration&amp;tab=trials" id="hide-constant"`,
		`/live?cols=state%2Chp.batch%2Chp.lr%2Cbest%2Csteps%2Crestarts%2Ccheckpoints%2Cstarted%2Cended%2Cduration&amp;order=desc&amp;sort=duration&amp;tab=trials"`)
	if strings.Contains(body, "<code>batch=32</code>") {
		t.Error("with every column shown the page still lists batch as hidden")
	}
	// The one that ended stopped the clock; the running ones keep
	// counting: sorted by duration, longest first, it is last.
	order := regexp.MustCompile(`id="trials-(\d+)"`).FindAllStringSubmatch(body, -1)
	if len(order) != 3 || order[2][1] != itoa(trials[1].ID) {
		t.Errorf("by duration, longest first: %v", order)
	}

	// Sorting by a shared hyperparameter keeps its column.
	_, body = get(t, c, f.m, path+"?sort=hp.batch&tab=trials")
	wants(t, "sorted by batch", body, `id="sort-hp.batch" class="sorted">batch<span`)
}

// seedTrials adds n paused trials to a paused experiment: trial i has
// lr 0.001·(i+1), a best validation loss and a latest validation accuracy
// on every third, except the ones past n-10, which have neither.
func seedTrials(t *testing.T, f pageFixture, e resolute.Experiment, n int) []resolute.Trial {
	t.Helper()
	ctx := t.Context()
	var out []resolute.Trial
	var reports []resolute.MetricsReport
	for i := range n {
		tr, err := f.m.DB.CreateTrial(ctx, e.ID, 1000+i, resolute.StatePaused, fmt.Appendf(nil, `{"lr": %g, "batch": 32}`, 0.001*float64(i+1)), 1)
		if err != nil {
			t.Fatal(err)
		}
		if i < n-10 {
			if err := f.m.DB.SetTrialBestValidation(ctx, tr.ID, float64((i*37)%n)); err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				// An earlier report with a better accuracy than the latest:
				// the column shows the latest.
				reports = append(reports,
					resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: 5, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"accuracy": 2}}`)},
					resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: 10, Group: "validation", Metrics: fmt.Appendf(nil, `{"avg_metrics": {"accuracy": %g}}`, 1/float64(i+1))})
			}
		}
		out = append(out, tr)
	}
	if err := f.m.DB.InsertMetrics(ctx, reports); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTheTrialsTabSortsAndPagesOnTheServerWithTrialsWithoutAValueLast(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	const n = 120
	trials, err := f.m.DB.Trials(t.Context(), f.e.ID) // the fixture's and the searcher's first
	if err != nil {
		t.Fatal(err)
	}
	old := len(trials)
	trials = append(trials, seedTrials(t, f, f.e, n-old)...)
	byID := map[string]int{}
	for i, tr := range trials {
		byID[itoa(tr.ID)] = i
	}
	ids := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<tr id="trials-(\d+)"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	pages := func(query string) []string {
		var all []string
		for p := 1; p <= 3; p++ {
			v, _ := url.ParseQuery(query)
			v.Set("tab", "trials")
			if p > 1 {
				v.Set("page", strconv.Itoa(p))
			}
			resp, body := get(t, c, f.m, f.path("?"+v.Encode()))
			if resp.StatusCode != 200 {
				t.Fatalf("%s page %d: %d\n%.400s", query, p, resp.StatusCode, body)
			}
			got := ids(body)
			if want := min(50, n-50*(p-1)); len(got) != want {
				t.Fatalf("%s page %d has %d rows, want %d", query, p, len(got), want)
			}
			wants(t, "page "+strconv.Itoa(p), body, "Page "+strconv.Itoa(p)+" of 3 · 120 trials")
			all = append(all, got...)
		}
		return all
	}

	tests := map[string]struct {
		query string
		// less says whether trial a may come before trial b; has says the
		// trial has a value (those without come last).
		less func(a, b resolute.Trial) bool
		has  func(a resolute.Trial) bool
	}{
		"by id":                              {"", func(a, b resolute.Trial) bool { return a.ID < b.ID }, nil},
		"by id, newest first":                {"order=desc", func(a, b resolute.Trial) bool { return a.ID > b.ID }, nil},
		"by best, those without last":        {"sort=best", func(a, b resolute.Trial) bool { return *a.BestValidation <= *b.BestValidation }, func(a resolute.Trial) bool { return a.BestValidation != nil }},
		"by best down, those without last":   {"order=desc&sort=best", func(a, b resolute.Trial) bool { return *a.BestValidation >= *b.BestValidation }, func(a resolute.Trial) bool { return a.BestValidation != nil }},
		"by a hyperparameter, largest first": {"order=desc&sort=hp.lr", func(a, b resolute.Trial) bool { return lr(a) >= lr(b) }, func(a resolute.Trial) bool { return lr(a) > 0 }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			all := pages(tc.query)
			seen := map[string]bool{}
			for i, id := range all {
				if seen[id] {
					t.Fatalf("trial %s is on two pages", id)
				}
				seen[id] = true
				if i == 0 {
					continue
				}
				a, b := fresh(t, f, trials[byID[all[i-1]]]), fresh(t, f, trials[byID[id]])
				switch {
				case tc.has != nil && !tc.has(a) && tc.has(b):
					t.Fatalf("trial %s without a value comes before trial %s with one", all[i-1], id)
				case tc.has != nil && (!tc.has(a) || !tc.has(b)):
				case !tc.less(a, b):
					t.Fatalf("trial %s comes before trial %s", all[i-1], id)
				}
			}
		})
	}

	// A metric of the latest validation report: shown when chosen, its
	// latest value, and sorted with the trials without it last both ways.
	for order, query := range map[string]string{"asc": "?sort=m.accuracy&tab=trials", "desc": "?order=desc&sort=m.accuracy&tab=trials"} {
		_, body := get(t, c, f.m, f.path(query))
		wants(t, "sorted by accuracy", body, `id="sort-m.accuracy" class="sorted">Latest accuracy<span`, `id="col-m.accuracy" checked`)
		got := ids(body)
		withAcc := 0
		for i := range trials[old:] {
			if i < n-old-10 && i%3 == 0 {
				withAcc++
			}
		}
		for _, id := range got[:withAcc] {
			if i := byID[id] - old; i < 0 || i%3 != 0 || i >= n-old-10 {
				t.Errorf("by accuracy %s, trial %s without one comes before one with", order, id)
			}
		}
		first, last := trials[old], trials[old+3*(withAcc-1)]
		want := itoa(first.ID) // accuracy 1, the largest
		if order == "asc" {
			want = itoa(last.ID)
		}
		if got[0] != want {
			t.Errorf("by accuracy %s, first: trial %s, want %s", order, got[0], want)
		}
		row := body[strings.Index(body, `id="trials-`+itoa(first.ID)+`"`):]
		if row = row[:strings.Index(row, "</tr>")]; !strings.Contains(row, `<td class="num metric">1</td>`) {
			t.Errorf("trial %d's accuracy is not its latest: %s", first.ID, row)
		}
	}

	// A metric no trial reported is a column of dashes, not an error.
	_, body := get(t, c, f.m, f.path("?sort=m.nope&tab=trials"))
	wants(t, "sorted by an unreported metric", body, `id="sort-m.nope" class="sorted">Latest nope<span`, `<td class="num metric">–</td>`)

	// Past the last page, a way back.
	_, body = get(t, c, f.m, f.path("?page=9&tab=trials"))
	wants(t, "past the end", body, "No more trials.")
	for q, msg := range map[string]string{"?page=0&tab=trials": "page: expected a positive integer", "?sort=hp.nope&tab=trials": "sort: unknown column &#34;hp.nope&#34;", "?cols=m.&tab=trials": "cols: unknown column &#34;m.&#34;",
		"?cols=color&tab=trials": "cols: unknown column &#34;color&#34;", "?order=up&tab=trials": "order: expected asc or desc",
		"?brushed=1%2Cx&tab=trials": "brushed: expected a positive integer"} {
		if resp, body := get(t, c, f.m, f.path(q)); resp.StatusCode != 400 || !strings.Contains(body, msg) {
			t.Errorf("%s: %d, want 400 with %q", q, resp.StatusCode, msg)
		}
	}
}

func TestTheTrialsTabsColumnsBrushedTrialsAndCompareBoxesLiveInItsURL(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")

	// The chooser's boxes become cols, in table order, the order kept.
	resp, _ := get(t, c, f.m, f.path("?tab=trials&sort=best&order=desc&col=started&col=hp.opt&col=best"))
	want := f.path("?cols=hp.opt%2Cbest%2Cstarted&order=desc&sort=best&tab=trials")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Fatalf("the chooser: %d to %q, want %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	_, body := get(t, c, f.m, want)
	wants(t, "the chosen columns", body, `id="sort-hp.opt"`, `id="sort-best"`, `id="sort-started"`, `id="col-hp.opt" checked`,
		`<input type="hidden" name="sort" value="best">`, `<input type="hidden" name="order" value="desc">`)
	for _, not := range []string{`id="sort-hp.lr"`, `id="sort-state"`, `id="sort-steps"`, `id="col-state" checked`} {
		if strings.Contains(body, not) {
			t.Errorf("the chosen columns include %s", not)
		}
	}
	// The default columns have the shortest URL; a legacy desc=1 too.
	resp, _ = get(t, c, f.m, f.path("?tab=trials&cols=state,hp.lr,hp.model.depth,hp.opt,best,steps,restarts,checkpoints,started,ended,duration&desc=1"))
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || loc != f.path("?order=desc&tab=trials") {
		t.Errorf("the default columns: %d to %q", resp.StatusCode, loc)
	}

	// Brushed trials: only they, every link keeping them.
	brushed := itoa(f.trials[1].ID) + "," + itoa(f.trials[3].ID)
	_, body = get(t, c, f.m, f.path("?brushed="+url.QueryEscape(brushed)+"&tab=trials"))
	wants(t, "the brushed trials", body, `id="brushed-filter"`, "Showing the 2 of 5 trials brushed", `id="show-all-trials"`,
		`brushed=`+url.QueryEscape(brushed)+`&amp;sort=best&amp;tab=trials" id="sort-best"`, `<input type="hidden" name="brushed" value="`+brushed+`">`)
	got := regexp.MustCompile(`<tr id="trials-(\d+)"`).FindAllStringSubmatch(body, -1)
	if len(got) != 2 || got[0][1] != itoa(f.trials[1].ID) || got[1][1] != itoa(f.trials[3].ID) {
		t.Errorf("brushed rows: %v", got)
	}

	// The compare boxes are a GET form of /compare that sends trials.
	wants(t, "the compare form", body, `<form class="inline" method="get" action="/compare" id="trial-compare">`,
		`form="trial-compare" name="trials" value="`+itoa(f.trials[1].ID)+`"`)
	resp, body = get(t, c, f.m, "/compare?trials="+itoa(f.trials[1].ID)+"&trials="+itoa(f.trials[3].ID))
	if resp.StatusCode != 200 {
		t.Fatalf("compare: %d", resp.StatusCode)
	}
	wants(t, "the compare page", body, "Trial "+itoa(f.trials[1].ID), "Trial "+itoa(f.trials[3].ID))
}

// fresh reads a trial again (its best validation was set after creation).
func fresh(t *testing.T, f pageFixture, tr resolute.Trial) resolute.Trial {
	t.Helper()
	got, err := f.m.DB.Trial(t.Context(), tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func lr(t resolute.Trial) float64 {
	var h struct{ LR float64 }
	json.Unmarshal(t.Hparams, &h)
	return h.LR
}
