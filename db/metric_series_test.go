package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// keptPoint is a row of metric_points.
type keptPoint struct {
	Trial  int64
	Group  string
	Metric string
	Step   int64
	Report int64
	Value  float64
	Coarse bool
}

// seriesRow is a row of metric_series.
type seriesRow struct {
	Trial                     int64
	Group, Metric             string
	First, Last, Width, CW, N int64
	LastValue, Min, Max       float64
}

// keptState reads metric_points and metric_series whole, in key order.
func keptState(t *testing.T, conn *pgx.Conn) ([]keptPoint, []seriesRow) {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT trial_id, group_name, metric, step, report_id, value, coarse FROM metric_points ORDER BY 1, 2, 3, 4, 5`)
	if err != nil {
		t.Fatal(err)
	}
	points, err := pgx.CollectRows(rows, pgx.RowToStructByPos[keptPoint])
	if err != nil {
		t.Fatal(err)
	}
	rows, err = conn.Query(ctx, `SELECT trial_id, group_name, metric, first_step, last_step, width, coarse_width, reports,
		last_value, min_value, max_value FROM metric_series ORDER BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	series, err := pgx.CollectRows(rows, pgx.RowToStructByPos[seriesRow])
	if err != nil {
		t.Fatal(err)
	}
	return points, series
}

// visibleValues reads every visible report's numeric values as points, in
// key order: what the series are built from (numbers a float8 holds).
func visibleValues(t *testing.T, conn *pgx.Conn) []keptPoint {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT m.trial_id, m.group_name, kv.key, m.steps_completed, m.id, metric_series_float(kv.value), false
		FROM metrics m, jsonb_each(m.metrics->'avg_metrics') kv WHERE NOT m.hidden AND metric_series_float(kv.value) IS NOT NULL ORDER BY 1, 2, 3, 4, 5`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[keptPoint])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keepOf is the definition of the points a series keeps (migration 00021),
// written plainly: of all its values (in step, report order), the first,
// and each bucket's smallest (the earliest of equal ones), largest (the
// latest) and last, for 128 buckets, those of 16 marked coarse.
func keepOf(all []keptPoint) []keptPoint {
	width := func(f, l, k int64) int64 {
		w := int64(1)
		for l/w-f/w >= k {
			w *= 2
		}
		return w
	}
	var out []keptPoint
	for start := 0; start < len(all); {
		end := start
		for end < len(all) && all[end].Trial == all[start].Trial && all[end].Group == all[start].Group && all[end].Metric == all[start].Metric {
			end++
		}
		s := all[start:end]
		f, l := s[0].Step, s[len(s)-1].Step
		pick := func(w int64) map[int]bool {
			kept := map[int]bool{0: true}
			lo, hi, last := map[int64]int{}, map[int64]int{}, map[int64]int{}
			for i, p := range s {
				b := p.Step / w
				if j, ok := lo[b]; !ok || p.Value < s[j].Value {
					lo[b] = i
				}
				if j, ok := hi[b]; !ok || p.Value >= s[j].Value {
					hi[b] = i
				}
				last[b] = i
			}
			for _, m := range []map[int64]int{lo, hi, last} {
				for _, i := range m {
					kept[i] = true
				}
			}
			return kept
		}
		fine, coarse := pick(width(f, l, 128)), pick(width(f, l, 16))
		for i, p := range s {
			if fine[i] {
				p.Coarse = coarse[i]
				out = append(out, p)
			}
		}
		start = end
	}
	return out
}

func TestKeptPointsAreWhatTheirDefinitionKeepsWhateverOrderReportsCome(t *testing.T) {
	ctx := context.Background()
	d, conn, _ := freshDB(t)
	tr := newTrial(t, d)
	other, err := d.CreateTrial(ctx, tr.ExperimentID, 2, "ACTIVE", []byte(`{}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	reportAt := func(trialID int64, run int, step int64, group string) resolute.MetricsReport {
		m := map[string]any{"loss": math.Round(rng.NormFloat64()*1000) / 997, "flat": 1.0, "lr": 1 / float64(step+1)}
		if rng.IntN(5) == 0 {
			m["rare"] = rng.Float64()
		}
		if rng.IntN(7) == 0 {
			m["loss"] = "NaN"
		}
		body, _ := json.Marshal(map[string]any{"avg_metrics": m})
		return resolute.MetricsReport{TrialID: trialID, TrialRunID: run, StepsCompleted: step, Group: group, Metrics: body}
	}
	merge := func() {
		t.Helper()
		if _, err := d.MergeSeries(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		merge()
		want := keepOf(visibleValues(t, conn))
		got, series := keptState(t, conn)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: kept points differ from their definition (-want +got):\n%s", when, diff)
		}
		// The summaries: the last value, the extremes.
		all := visibleValues(t, conn)
		for _, s := range series {
			var vals []float64
			var last keptPoint
			for _, p := range all {
				if p.Trial == s.Trial && p.Group == s.Group && p.Metric == s.Metric {
					vals = append(vals, p.Value)
					last = p
				}
			}
			if int64(len(vals)) != s.N || s.Min != slices.Min(vals) || s.Max != slices.Max(vals) || s.LastValue != last.Value || s.Last != last.Step {
				t.Fatalf("%s: the series %+v does not sum up its %d values (last %+v)", when, s, len(vals), last)
			}
		}
	}

	// In order, in batches of every size, two trials and two groups at once,
	// widths doubling many times.
	step := int64(0)
	for i := range 40 {
		var batch []resolute.MetricsReport
		for range i*i/4 + 1 {
			step += int64(1 + rng.IntN(30))
			batch = append(batch, reportAt(tr.ID, 1, step, "training"), reportAt(other.ID, 1, step*3, "training"))
			if rng.IntN(4) == 0 {
				batch = append(batch, reportAt(tr.ID, 1, step, "validation"))
			}
		}
		if err := d.InsertMetrics(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			merge() // merged in many steps, as the master's merger does
		}
	}
	check("in order")

	// Out of order: steps between those stored, and before the first.
	var late []resolute.MetricsReport
	for range 50 {
		late = append(late, reportAt(tr.ID, 1, 1+rng.Int64N(step), "training"))
	}
	late = append(late, reportAt(other.ID, 1, 0, "training"))
	slices.SortFunc(late, func(a, b resolute.MetricsReport) int { return int(a.StepsCompleted - b.StepsCompleted) })
	late = slices.CompactFunc(late, func(a, b resolute.MetricsReport) bool { return a.StepsCompleted == b.StepsCompleted })
	if err := d.InsertMetrics(ctx, late); err != nil {
		t.Fatal(err)
	}
	check("out of order")

	// A metric reported again at a stored step with another value (the
	// reports merge), and a new metric at a stored step.
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{
		{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: late[3].StepsCompleted, Group: "training", Metrics: json.RawMessage(`{"avg_metrics": {"loss": -1000, "extra": 5}}`)},
		{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: late[9].StepsCompleted, Group: "training", Metrics: json.RawMessage(`{"avg_metrics": {"loss": 1e-320}}`)},
	}); err != nil {
		t.Fatal(err)
	}
	check("reported again")

	// A restart from scratch hides the first run's reports; a second run
	// reports at the same steps.
	err = d.InTx(ctx, func(q *db.Queries) error {
		_, err := q.HideMetricsPastRestart(ctx, other.ID, 2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{reportAt(other.ID, 2, 3, "training"), reportAt(other.ID, 2, 6, "training")}); err != nil {
		t.Fatal(err)
	}
	check("restarted")

	// A bulk load (one INSERT of many reports) is built from the reports.
	third, err := d.CreateTrial(ctx, tr.ExperimentID, 3, "ACTIVE", []byte(`{}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
		SELECT t, 3, s, 'training', jsonb_build_object('avg_metrics', jsonb_build_object('loss', sin(s * t), 'acc', s % 7))
		FROM generate_series(1, 6000) s, unnest(ARRAY[$1::bigint, $2::bigint]) t`, third.ID, tr.ID); err != nil {
		t.Fatal(err)
	}
	check("bulk loaded")

	// Deleting the experiment deletes its series.
	if _, err := conn.Exec(ctx, `DELETE FROM experiments WHERE id = $1`, tr.ExperimentID); err != nil {
		t.Fatal(err)
	}
	if points, series := keptState(t, conn); len(points)+len(series) != 0 {
		t.Errorf("after the experiment's delete: %d points, %d series", len(points), len(series))
	}
}

func TestTheMigrationBuildsTheSeriesOfReportsStoredBefore(t *testing.T) {
	ctx := context.Background()
	d, conn, url := freshDB(t)
	tr := newTrial(t, d)
	if err := d.MigrateDownTo(ctx, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO metrics (trial_id, trial_run_id, steps_completed, group_name, metrics)
		SELECT $1, 1, s, g, jsonb_build_object('avg_metrics', jsonb_build_object('loss', 1.0 / s, 'acc', s % 17))
		FROM generate_series(1, 3000) s, unnest(ARRAY['training', 'validation']) g`, tr.ID); err != nil {
		t.Fatal(err)
	}
	d.Close()
	again, err := db.Open(ctx, url, slog.New(slog.DiscardHandler)) // migrates up again
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	want := keepOf(visibleValues(t, conn))
	got, series := keptState(t, conn)
	if len(series) != 4 {
		t.Fatalf("%d series, want 4", len(series))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept points (-want +got):\n%s", diff)
	}
}

func TestDownsampleKeepsTheEndsAndEachBucketsExtremes(t *testing.T) {
	pts := func(values ...float64) []resolute.MetricPoint {
		out := make([]resolute.MetricPoint, len(values))
		for i, v := range values {
			out[i] = resolute.MetricPoint{StepsCompleted: int64(i), Value: v}
		}
		return out
	}
	steps := func(ps []resolute.MetricPoint) []int64 {
		out := []int64{}
		for _, p := range ps {
			out = append(out, p.StepsCompleted)
		}
		return out
	}
	tests := map[string]struct {
		values []float64
		max    int
		want   []int64
	}{
		"a series that fits is kept whole":           {[]float64{3, 1, 2}, 4, []int64{0, 1, 2}},
		"fewer than 4 points asked keeps it whole":   {[]float64{1, 2, 3, 4, 5}, 3, []int64{0, 1, 2, 3, 4}},
		"each half keeps its low, its high and ends": {[]float64{5, 9, 1, 4, 4, 8, 0, 2}, 4, []int64{0, 1, 2, 5, 6, 7}},
		"equal values keep the earliest":             {[]float64{1, 1, 1, 1, 1, 1, 1, 1}, 4, []int64{0, 4, 7}},
		"a spike in a long flat series survives":     {append(append(slices.Repeat([]float64{1}, 50), 99), slices.Repeat([]float64{1}, 49)...), 10, []int64{0, 20, 40, 50, 60, 80, 99}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, steps(db.Downsample(pts(tc.values...), tc.max))); diff != "" {
				t.Errorf("kept steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExperimentChartsKeepEachTrialsExtremesAndLastPointAtFullPrecision(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	tr := newTrial(t, d)
	rng := rand.New(rand.NewPCG(3, 5))
	values := map[int64]float64{}
	var reports []resolute.MetricsReport
	for step := int64(100); step <= 200_000; step += 100 {
		v := 1/float64(step) + rng.Float64()*1e-7 + 0.1234567890123
		if step == 77_700 {
			v = 12.345678901234567 // a spike
		}
		if step == 123_400 {
			v = -0.000123456789012345 // a dip
		}
		values[step] = v
		reports = append(reports, resolute.MetricsReport{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: step, Group: "validation",
			Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %s}}`, json.Number(fmt.Sprint(v))))})
	}
	if err := d.InsertMetrics(ctx, reports); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MergeSeries(ctx); err != nil {
		t.Fatal(err)
	}
	for _, maxPoints := range []int{16, 30, 100, 101, 600} {
		t.Run(fmt.Sprint(maxPoints, " points"), func(t *testing.T) {
			got, err := d.ExperimentSeries(ctx, tr.ExperimentID, db.Series{Group: "validation", Metric: "loss", MaxPoints: maxPoints, MaxSteps: -1, AfterStep: -1})
			if err != nil || len(got) != 1 {
				t.Fatalf("%v, %v", got, err)
			}
			pts := got[0].Points
			if len(pts) > maxPoints+2 || len(pts) < min(maxPoints, 16) {
				t.Errorf("%d points for %d", len(pts), maxPoints)
			}
			steps := make([]int64, len(pts))
			for i, p := range pts {
				steps[i] = p.StepsCompleted
				if p.Value != values[p.StepsCompleted] {
					t.Errorf("at step %d: %v, reported %v", p.StepsCompleted, p.Value, values[p.StepsCompleted])
				}
			}
			if !slices.IsSorted(steps) || steps[0] != 100 || steps[len(steps)-1] != 200_000 {
				t.Errorf("not the ends, in order: %v", steps)
			}
			if !slices.Contains(steps, 77_700) || !slices.Contains(steps, 123_400) {
				t.Errorf("the spike or the dip is lost: %v", steps)
			}
		})
	}
	// What a live chart lacks: the points past its last.
	if err := d.InsertMetrics(ctx, []resolute.MetricsReport{{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: 200_100, Group: "validation",
		Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5}}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := d.ExperimentSeries(ctx, tr.ExperimentID, db.Series{Group: "validation", Metric: "loss", MaxPoints: 30, MaxSteps: -1, AfterStep: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]resolute.TrialSeries{{TrialID: tr.ID, Points: []resolute.MetricPoint{{StepsCompleted: 200_100, Value: 0.5}}}}, got,
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ReportedAt" }, cmp.Ignore())); diff != "" {
		t.Errorf("past the last point (-want +got):\n%s", diff)
	}
}
