package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/web"
)

// experimentWithMetrics creates a paused experiment whose trials reported
// the given validation losses (one report per 10 batches), plus a report
// of another group and one without the metric.
func experimentWithMetrics(t *testing.T, m *handlerstest.Master, losses ...[]float64) (resolute.Experiment, []resolute.Trial) {
	t.Helper()
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: charted\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	if err != nil {
		t.Fatal(err)
	}
	var trials []resolute.Trial
	var reports []resolute.MetricsReport
	for i, series := range losses {
		tr, err := m.DB.CreateTrial(t.Context(), e.ID, 100+i, resolute.StateActive, []byte("{}"), 1)
		if err != nil {
			t.Fatal(err)
		}
		trials = append(trials, tr)
		for j, v := range series {
			reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: int64(10 * (j + 1)), Group: "validation",
				Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %v, "accuracy": 0.5}}`, v))})
		}
		reports = append(reports,
			resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: 5, Group: "training", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 9}}`)},
			resolute.MetricsReport{TrialID: tr.ID, StepsCompleted: 7, Group: "validation", Metrics: json.RawMessage(`{"avg_metrics": {"loss": "NaN"}}`)})
	}
	if err := m.DB.InsertMetrics(t.Context(), reports); err != nil {
		t.Fatal(err)
	}
	return e, trials
}

func TestExperimentMetricsAreOneSeriesPerTrial(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	many := make([]float64, 100)
	for i := range many {
		many[i] = 1
	}
	many[42] = 7 // a spike the downsampling keeps
	e, trials := experimentWithMetrics(t, m, []float64{3, 2, 1}, many)
	other, _ := experimentWithMetrics(t, m, []float64{5})

	series := func(id int64, query string) resolute.ExperimentMetricsResponse {
		t.Helper()
		var got resolute.ExperimentMetricsResponse
		if code := api(t, m, "GET", "/api/v1/experiments/"+itoa(id)+"/metrics?"+query, token, "", &got); code != 200 {
			t.Fatalf("%s: status %d", query, code)
		}
		return got
	}
	got := series(e.ID, "group=validation&metric=loss&max_points=10")
	if len(got.Trials) != 2 || got.Trials[0].TrialID != trials[0].ID || got.Trials[1].TrialID != trials[1].ID {
		t.Fatalf("trials %+v, want %d and %d", got.Trials, trials[0].ID, trials[1].ID)
	}
	want := []resolute.MetricPoint{{StepsCompleted: 10, Value: 3}, {StepsCompleted: 20, Value: 2}, {StepsCompleted: 30, Value: 1}}
	// Each point carries when it was reported (for a chart by wall time).
	if diff := cmp.Diff(want, got.Trials[0].Points, cmpopts.IgnoreFields(resolute.MetricPoint{}, "ReportedAt")); diff != "" {
		t.Errorf("the first trial's series (-want +got):\n%s", diff)
	}
	for _, p := range got.Trials[0].Points {
		if p.ReportedAt.IsZero() || p.Epoch != nil {
			t.Errorf("point %+v: want its report time and no epoch", p)
		}
	}
	long := got.Trials[1].Points
	if len(long) > 12 || long[0].StepsCompleted != 10 || long[len(long)-1].StepsCompleted != 1000 {
		t.Errorf("the long series is not downsampled to about 10 points with its ends: %+v", long)
	}
	spike := false
	for _, p := range long {
		spike = spike || p.StepsCompleted == 430 && p.Value == 7
	}
	if !spike {
		t.Errorf("the spike at 430 batches is lost: %+v", long)
	}

	// A zoomed chart asks for a range of batches, in detail.
	got = series(e.ID, "group=validation&metric=loss&max_points=10&min_batches=400&max_batches=460")
	if z := got.Trials[1].Points; len(z) != 7 || z[0].StepsCompleted != 400 || z[6].StepsCompleted != 460 || z[3].Value != 7 {
		t.Errorf("batches 400..460 of the long series: %+v", z)
	}
	if len(got.Trials[0].Points) != 0 {
		t.Errorf("the short series has points in 400..460: %+v", got.Trials[0].Points)
	}
	var trialSeries resolute.MetricsResponse
	api(t, m, "GET", "/api/v1/trials/"+itoa(trials[1].ID)+"/metrics?group=validation&min_batches=995", token, "", &trialSeries)
	if len(trialSeries.Metrics) != 1 || trialSeries.Metrics[0].StepsCompleted != 1000 {
		t.Errorf("a trial's validations from 995 batches: %+v", trialSeries.Metrics)
	}

	// A live chart asks only for what follows its last point.
	api(t, m, "GET", "/api/v1/trials/"+itoa(trials[1].ID)+"/metrics?group=validation&max_points=10&metric=loss&after_step=980", token, "", &trialSeries)
	if len(trialSeries.Metrics) != 2 || trialSeries.Metrics[0].StepsCompleted != 990 || trialSeries.Metrics[1].StepsCompleted != 1000 {
		t.Errorf("a trial's validations after step 980: %+v", trialSeries.Metrics)
	}
	got = series(e.ID, "group=validation&metric=loss&max_points=10&after_step=990")
	if len(got.Trials) != 2 || len(got.Trials[0].Points) != 0 || cmp.Diff([]resolute.MetricPoint{{StepsCompleted: 1000, Value: 1}}, got.Trials[1].Points, cmpopts.IgnoreFields(resolute.MetricPoint{}, "ReportedAt")) != "" {
		t.Errorf("the experiment's series after step 990: %+v", got.Trials)
	}
	for _, path := range []string{"/api/v1/trials/" + itoa(trials[0].ID) + "/metrics?after_step=last",
		"/api/v1/experiments/" + itoa(e.ID) + "/metrics?metric=loss&after_step=-1"} {
		var refusal struct{ Error struct{ Message string } }
		if code := api(t, m, "GET", path, token, "", &refusal); code != 400 || !strings.HasPrefix(refusal.Error.Message, "after_step:") {
			t.Errorf("GET %s: %d %q, want 400 naming after_step", path, code, refusal.Error.Message)
		}
	}

	got = series(e.ID, "group=training&metric=loss")
	if len(got.Trials) != 2 || len(got.Trials[0].Points) != 1 || got.Trials[0].Points[0].Value != 9 {
		t.Errorf("training series %+v", got.Trials)
	}
	got = series(other.ID, "metric=accuracy")
	if len(got.Trials) != 1 || len(got.Trials[0].Points) != 1 || got.Trials[0].Points[0].Value != 0.5 {
		t.Errorf("the other experiment's accuracy (validation by default) %+v", got.Trials)
	}
	got = series(e.ID, "metric=unreported")
	if got.Trials == nil || len(got.Trials) != 0 {
		t.Errorf("an unreported metric gives %+v, want no trials", got.Trials)
	}

	for path, status := range map[string]int{
		"/api/v1/experiments/" + itoa(e.ID) + "/metrics":                                         400,
		"/api/v1/experiments/" + itoa(e.ID) + "/metrics?metric=loss&max_points=wide":             400,
		"/api/v1/experiments/99999/metrics?metric=loss":                                          404,
		"/api/v1/experiments/" + itoa(e.ID) + "/metrics?metric=loss&min_batches=x":               400,
		"/api/v1/experiments/" + itoa(e.ID) + "/metrics?metric=loss&min_batches=9&max_batches=3": 400,
		"/api/v1/trials/" + itoa(trials[0].ID) + "/metrics?max_batches=many":                     400,
	} {
		if code := api(t, m, "GET", path, token, "", nil); code != status {
			t.Errorf("GET %s: %d, want %d", path, code, status)
		}
	}
}

func TestChartsAreOnTheTrialAndExperimentPagesOnly(t *testing.T) {
	if !web.New().Has("vendor/uPlot.iife.min.js") {
		t.Skip("uPlot is not embedded: run make web")
	}
	m := handlerstest.Start(t, handlerstest.Options{})
	e, trials := experimentWithMetrics(t, m, []float64{3, 2, 1})
	err := m.DB.InsertMetrics(t.Context(), []resolute.MetricsReport{{TrialID: trials[0].ID, StepsCompleted: 30, Group: "profiling",
		Metrics: json.RawMessage(`{"avg_metrics": {"batch_seconds": 0.1}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	c := signInPages(t, m, "admin", "")
	trial := "/trials/" + itoa(trials[0].ID)
	_, body := get(t, c, m, trial)
	wants(t, "the trial page", body, `id="trial-charts" class="chart-set" hx-preserve="true" data-chart="trial"`,
		`data-url="/api/v1/trials/`+itoa(trials[0].ID)+`/metrics" data-groups="training validation profiling" data-metric="loss"`,
		`/static/vendor/uPlot.iife.min.`, `/static/chartgrid.`, `/static/charts.`)
	_, body = get(t, c, m, trial+"/live")
	wants(t, "the trial's live fragment", body, `id="trial-charts" class="chart-set" hx-preserve="true"`)

	_, body = get(t, c, m, "/experiments/"+itoa(e.ID))
	wants(t, "the experiment page", body, `id="experiment-chart" hx-preserve="true"`, `data-url="/api/v1/experiments/`+itoa(e.ID)+`/metrics"`,
		`value="validation/loss" data-group="validation" data-metric="loss" selected`, `value="validation/accuracy"`,
		`value="training/loss"`, `/static/charts.`)
	if strings.Contains(body, `value="profiling/`) {
		t.Error("the experiment's metric picker offers a group other than training and validation")
	}
	_, body = get(t, c, m, "/experiments/"+itoa(e.ID)+"/live")
	wants(t, "the experiment's live fragment", body, `id="experiment-chart" hx-preserve="true"`)

	_, body = get(t, c, m, "/experiments")
	if strings.Contains(body, "uPlot") || strings.Contains(body, "charts.") {
		t.Error("the experiment list, which draws no chart, loads uPlot")
	}
}

// TestAChartOfManyTrialsGetsFewerPointsATrial: 200 trials of 400 reports
// each, charted 600 wide, come back at about 30,000 points in all (150 a
// trial, downsampled with each series' ends), not 80,000.
func TestAChartOfManyTrialsGetsFewerPointsATrial(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	losses := make([][]float64, 200)
	for i := range losses {
		losses[i] = make([]float64, 400)
		for j := range losses[i] {
			losses[i][j] = float64(i + j)
		}
	}
	e, _ := experimentWithMetrics(t, m, losses...)
	var got resolute.ExperimentMetricsResponse
	if code := api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/metrics?group=validation&metric=loss&max_points=600", token, "", &got); code != 200 {
		t.Fatalf("status %d", code)
	}
	total := 0
	for _, tr := range got.Trials {
		total += len(tr.Points)
		if n := len(tr.Points); n > 160 || tr.Points[0].StepsCompleted != 10 || tr.Points[n-1].StepsCompleted != 4000 {
			t.Fatalf("trial %d: %d points from %d to %d, want at most about 150 with its ends", tr.TrialID, n, tr.Points[0].StepsCompleted, tr.Points[n-1].StepsCompleted)
		}
	}
	if len(got.Trials) != 200 || total > 32_000 {
		t.Errorf("%d trials, %d points in all", len(got.Trials), total)
	}
}
