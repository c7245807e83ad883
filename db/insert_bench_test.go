package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

// BenchmarkInsertMetrics stores batches of 16 training reports of 50
// metrics each into one trial, as the metrics writer does under load, and
// prints the time a batch takes (its series are merged later, by the
// master's merger: db/series_async.go).
func BenchmarkInsertMetrics(b *testing.B) {
	d := bootstrapped(b)
	tr := newTrial(b, d)
	m := map[string]float64{}
	step := int64(0)
	b.ResetTimer()
	for range b.N {
		batch := make([]resolute.MetricsReport, 16)
		for i := range batch {
			step++
			for j := range 50 {
				m[fmt.Sprintf("m%02d", j)] = float64(j)/7 + float64(step%13)
			}
			body, _ := json.Marshal(map[string]any{"avg_metrics": m})
			batch[i] = resolute.MetricsReport{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: step, Group: "training", Metrics: body}
		}
		if err := d.InsertMetrics(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeSeries stores 256 training reports of 50 metrics each into
// one trial (about what the merger finds after its debounce under
// BenchmarkMetricIngestion's load), and times the merge of their series:
// the work ingestion no longer waits for, done in the background.
func BenchmarkMergeSeries(b *testing.B) {
	d := bootstrapped(b)
	tr := newTrial(b, d)
	m := map[string]float64{}
	step := int64(0)
	var merging time.Duration
	for range b.N {
		for range 16 {
			batch := make([]resolute.MetricsReport, 16)
			for i := range batch {
				step++
				for j := range 50 {
					m[fmt.Sprintf("m%02d", j)] = float64(j)/7 + float64(step%13)
				}
				body, _ := json.Marshal(map[string]any{"avg_metrics": m})
				batch[i] = resolute.MetricsReport{TrialID: tr.ID, TrialRunID: 1, StepsCompleted: step, Group: "training", Metrics: body}
			}
			if err := d.InsertMetrics(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		if n, err := d.MergeSeries(context.Background()); err != nil || n != 256 {
			b.Fatalf("merged %d (%v)", n, err)
		}
		merging += time.Since(t0)
	}
	b.ReportMetric(float64(merging.Microseconds())/float64(b.N*256), "merge-µs/report")
}
