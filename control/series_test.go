package control_test

import (
	"encoding/json"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

func series(values ...float64) []resolute.MetricsReport {
	out := make([]resolute.MetricsReport, len(values))
	for i, v := range values {
		b, _ := json.Marshal(map[string]any{"avg_metrics": map[string]any{"loss": v}})
		out[i] = resolute.MetricsReport{StepsCompleted: int64(i), Metrics: b}
	}
	return out
}

func steps(rs []resolute.MetricsReport) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.StepsCompleted
	}
	return out
}

func TestDownsampleKeepsEndsAndSpikes(t *testing.T) {
	values := make([]float64, 1000)
	for i := range values {
		values[i] = 1
	}
	values[537] = 50 // a spike
	got := control.Downsample(series(values...), 20, "loss")
	if len(got) > 22 {
		t.Fatalf("%d points for 20", len(got))
	}
	s := steps(got)
	if s[0] != 0 || s[len(s)-1] != 999 {
		t.Fatalf("ends lost: %v", s)
	}
	found := false
	for _, st := range s {
		found = found || st == 537
	}
	if !found {
		t.Fatalf("the spike at 537 is lost: %v", s)
	}
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			t.Fatalf("not in step order: %v", s)
		}
	}
	if short := series(1, 2, 3); len(control.Downsample(short, 20, "loss")) != 3 {
		t.Fatal("a short series changed")
	}
}

func TestDownsamplePointsKeepsEndsAndSpikes(t *testing.T) {
	points := make([]resolute.MetricPoint, 1000)
	for i := range points {
		points[i] = resolute.MetricPoint{StepsCompleted: int64(i), Value: 1}
	}
	points[537].Value = -50 // a dip
	got := control.DownsamplePoints(points, 20)
	if len(got) > 22 || got[0].StepsCompleted != 0 || got[len(got)-1].StepsCompleted != 999 {
		t.Fatalf("%d points, ends %v", len(got), got)
	}
	found := false
	for _, p := range got {
		found = found || p.StepsCompleted == 537
	}
	if !found {
		t.Fatalf("the dip at 537 is lost: %v", got)
	}
}
