package control

import (
	"encoding/json"

	"github.com/resolute-ml/resolute"
)

// Downsample keeps at most about maxPoints of a metric series for a chart:
// the reports are cut into maxPoints/2 buckets in step order and each bucket
// keeps the reports with the smallest and largest value of metric (so
// spikes survive), plus the first and last report. Without a metric, or
// when it is missing, a bucket keeps its first report. A series that fits
// is returned as is.
func Downsample(reports []resolute.MetricsReport, maxPoints int, metric string) []resolute.MetricsReport {
	if maxPoints < 4 || len(reports) <= maxPoints {
		return reports
	}
	buckets := maxPoints / 2
	keep := make([]bool, len(reports))
	keep[0], keep[len(reports)-1] = true, true
	for b := 0; b < buckets; b++ {
		lo, hi := b*len(reports)/buckets, (b+1)*len(reports)/buckets
		minAt, maxAt := -1, -1
		var minV, maxV float64
		for i := lo; i < hi; i++ {
			v, ok := metricValue(reports[i], metric)
			if !ok {
				continue
			}
			if minAt < 0 || v < minV {
				minAt, minV = i, v
			}
			if maxAt < 0 || v > maxV {
				maxAt, maxV = i, v
			}
		}
		if minAt < 0 {
			keep[lo] = true
			continue
		}
		keep[minAt], keep[maxAt] = true, true
	}
	out := make([]resolute.MetricsReport, 0, maxPoints+2)
	for i, k := range keep {
		if k {
			out = append(out, reports[i])
		}
	}
	return out
}

func metricValue(r resolute.MetricsReport, metric string) (float64, bool) {
	if metric == "" {
		return 0, false
	}
	var m struct {
		Avg map[string]any `json:"avg_metrics"`
	}
	if json.Unmarshal(r.Metrics, &m) != nil {
		return 0, false
	}
	return number(m.Avg[metric])
}
