package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// lossAt is a validation report of loss v at step.
func lossAt(trialID, step int64, v float64) resolute.MetricsReport {
	return resolute.MetricsReport{TrialID: trialID, TrialRunID: 1, StepsCompleted: step, Group: "validation",
		Metrics: json.RawMessage(fmt.Sprintf(`{"avg_metrics": {"loss": %v}}`, v))}
}

// storedCount is how many points metric_points keeps.
func storedCount(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM metric_points`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAChartReadsTheReportsNotMergedYetAndTheMergerKeepsWhatTheDefinitionKeeps(t *testing.T) {
	ctx := context.Background()
	d, conn, _ := freshDB(t)
	tr := newTrial(t, d)
	var reports []resolute.MetricsReport
	for step := int64(1); step <= 300; step++ {
		reports = append(reports, lossAt(tr.ID, step, 1/float64(step)))
	}
	if err := d.InsertMetrics(ctx, reports[:200]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MergeSeries(ctx); err != nil {
		t.Fatal(err)
	}
	merged := storedCount(t, conn)
	// Stored, not merged: the insert leaves the series alone, the chart
	// has them all the same (a live chart too: past its last step).
	if err := d.InsertMetrics(ctx, reports[200:]); err != nil {
		t.Fatal(err)
	}
	if n := storedCount(t, conn); n != merged {
		t.Fatalf("the insert changed the stored points: %d, then %d", merged, n)
	}
	steps := func(s db.Series) []int64 {
		t.Helper()
		got, err := d.ExperimentSeries(ctx, tr.ExperimentID, s)
		if err != nil || len(got) != 1 {
			t.Fatalf("%v, %v", got, err)
		}
		out := []int64{}
		for _, p := range got[0].Points {
			out = append(out, p.StepsCompleted)
		}
		return out
	}
	live := steps(db.Series{Group: "validation", Metric: "loss", MaxPoints: 600, MaxSteps: -1, AfterStep: 290})
	if diff := cmp.Diff([]int64{291, 292, 293, 294, 295, 296, 297, 298, 299, 300}, live); diff != "" {
		t.Errorf("a live chart's points past step 290, before the merge (-want +got):\n%s", diff)
	}
	before := steps(db.Series{Group: "validation", Metric: "loss", MaxPoints: 600, MaxSteps: -1, AfterStep: -1})
	if len(before) < 100 || !slices.Equal(before[len(before)-100:], steps(db.Series{Group: "validation", Metric: "loss", MaxSteps: -1, AfterStep: 200})) {
		t.Errorf("the chart before the merge lacks reports not merged: %v", before)
	}
	// Merged: the stored points are the definition's, and the chart the same.
	if n, err := d.MergeSeries(ctx); err != nil || n != 100 {
		t.Fatalf("merged %d reports (%v), want 100", n, err)
	}
	want := keepOf(visibleValues(t, conn))
	got, _ := keptState(t, conn)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("kept points after the merge (-want +got):\n%s", diff)
	}
	var kept []int64
	for _, p := range want {
		kept = append(kept, p.Step)
	}
	if diff := cmp.Diff(kept, steps(db.Series{Group: "validation", Metric: "loss", MaxPoints: 600, MaxSteps: -1, AfterStep: -1})); diff != "" {
		t.Errorf("the chart after the merge is not the kept points (-kept +chart):\n%s", diff)
	}
	if n, err := d.MergeSeries(ctx); err != nil || n != 0 {
		t.Errorf("a merge with nothing new read %d reports (%v)", n, err)
	}
}

func TestTwoMergersAtOnceMergeEachReportOnce(t *testing.T) {
	ctx := context.Background()
	d, conn, url := freshDB(t)
	other, err := db.Open(ctx, url, nil) // a second master
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	tr := newTrial(t, d)
	second, err := d.CreateTrial(ctx, tr.ExperimentID, 2, "ACTIVE", []byte(`{}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Writers and both masters' mergers at once; every merge's count adds up
	// to the reports stored, once each.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total, errs := 0, []error{}
	writing := make(chan struct{})
	for _, m := range []*db.DB{d, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := false; !done; {
				select {
				case <-writing:
					done = true // one last merge after the writers
				default:
				}
				n, err := m.MergeSeries(ctx)
				mu.Lock()
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	var writers sync.WaitGroup
	for w, trial := range []int64{tr.ID, second.ID} {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for batch := range 40 {
				var reports []resolute.MetricsReport
				for i := range 25 {
					step := int64(batch*25 + i + 1)
					reports = append(reports, lossAt(trial, step, float64((step*7+int64(w))%31)))
				}
				if err := d.InsertMetrics(ctx, reports); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	writers.Wait()
	close(writing)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if total != 2000 {
		t.Errorf("the mergers read %d reports, want 2,000: each once", total)
	}
	want := keepOf(visibleValues(t, conn))
	got, series := keptState(t, conn)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("kept points (-want +got):\n%s", diff)
	}
	for _, s := range series {
		if s.N != 1000 {
			t.Errorf("series %+v counts %d reports, want 1,000", s, s.N)
		}
	}
}
