package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// reportSeries stores n training reports of a trial, each of values
// metrics, in batches.
func reportSeries(b *testing.B, m *handlerstest.Master, trialID int64, n, values int) {
	b.Helper()
	metrics := map[string]float64{}
	for i := range values {
		metrics[fmt.Sprintf("metric_%03d", i)] = float64(i) / 7
	}
	var batch []resolute.MetricsReport
	for step := 1; step <= n; step++ {
		metrics["metric_000"] = 1 / float64(step)
		body, _ := json.Marshal(map[string]any{"avg_metrics": metrics})
		batch = append(batch, resolute.MetricsReport{TrialID: trialID, TrialRunID: 1, StepsCompleted: int64(step), Group: "training", Metrics: body})
		if len(batch) == 500 || step == n {
			if err := m.DB.InsertMetrics(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// getSeries reads a trial's series through the API and returns how long
// it took and how many bytes came.
func getSeries(b *testing.B, m *handlerstest.Master, token string, trialID int64, query string) (time.Duration, int64) {
	b.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/trials/%d/metrics?group=training%s", m.URL, trialID, query), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("series: %d %v", resp.StatusCode, err)
	}
	return time.Since(start), n
}

// BenchmarkTrialSeries prints the time to read one trial's full series of
// 20,000 reports of 10 metrics through GET /api/v1/trials/{id}/metrics
// (p50; and downsampled to 1,000 points), and the master's peak RSS
// (VmHWM, reset first) while it serves a series of 43,000 reports of 100
// metrics, which it streams rather than holds.
func BenchmarkTrialSeries(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{})
	token := loginB(b, m)
	b.Run("20000-reports", func(b *testing.B) {
		trialID, _ := runningTrial(b, m, token)
		reportSeries(b, m, trialID, 20000, 10)
		var whole, charted []time.Duration
		b.ResetTimer()
		for range max(b.N, 10) {
			d, _ := getSeries(b, m, token, trialID, "")
			whole = append(whole, d)
			d, _ = getSeries(b, m, token, trialID, "&max_points=1000&metric=metric_000")
			charted = append(charted, d)
		}
		slices.Sort(whole)
		slices.Sort(charted)
		b.ReportMetric(ms(whole[len(whole)/2]), "whole-p50-ms")
		b.ReportMetric(ms(charted[len(charted)/2]), "1000-points-p50-ms")
	})
	b.Run("rss-43000x100", func(b *testing.B) {
		trialID, _ := runningTrial(b, m, token)
		reportSeries(b, m, trialID, 43000, 100)
		for range max(b.N, 1) {
			runtime.GC()
			before := procStatusKiB(b, "VmRSS")
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Skipf("cannot reset the peak RSS: %v", err)
			}
			d, n := getSeries(b, m, token, trialID, "")
			peak := procStatusKiB(b, "VmHWM")
			b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
			b.ReportMetric(float64(peak-before)/1024, "rss-growth-MiB")
			b.Logf("43,000 × 100 series: %.0f MiB in %s; RSS %.0f MiB before, peak %.0f MiB", float64(n)/(1<<20), d.Round(time.Millisecond),
				float64(before)/1024, float64(peak)/1024)
		}
	})
}

// procStatusKiB reads a field of /proc/self/status, in KiB.
func procStatusKiB(b *testing.B, field string) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
