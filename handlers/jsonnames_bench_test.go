package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
)

// BenchmarkDecodeMetricsReport decodes one training metrics report of 50
// values, as the task API's handler does, in each spelling of its field
// names; it prints the bytes decoded per second (B/s) and time per report.
func BenchmarkDecodeMetricsReport(b *testing.B) {
	avg := map[string]float64{}
	for i := 0; i < 50; i++ {
		avg[fmt.Sprintf("m%02d", i)] = float64(i) / 7
	}
	for name, keys := range map[string][5]string{
		"snake_case": {"trial_id", "trial_run_id", "steps_completed", "avg_metrics", "batch_metrics"},
		"camelCase":  {"trialId", "trialRunId", "stepsCompleted", "avgMetrics", "batchMetrics"},
	} {
		body, _ := json.Marshal(map[string]any{"group": "GROUP_TRAINING", "metrics": map[string]any{
			keys[0]: 7, keys[1]: 1, keys[2]: 1200, "reportTime": "2026-11-25T22:00:00Z",
			"metrics": map[string]any{keys[3]: avg, keys[4]: []any{}}}})
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var m metricsBody
				if err := decodeJSON(httptest.NewRequest("POST", "/api/v1/trials/7/metrics", bytes.NewReader(body)), &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
