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
	return keep(reports, maxPoints, func(r resolute.MetricsReport) (float64, bool) { return metricValue(r, metric) })
}

// DownsamplePoints is Downsample for a series of one metric's values.
func DownsamplePoints(points []resolute.MetricPoint, maxPoints int) []resolute.MetricPoint {
	return keep(points, maxPoints, func(p resolute.MetricPoint) (float64, bool) { return p.Value, true })
}

// keep does Downsample's bucketing over any series, reading values with value.
func keep[T any](series []T, maxPoints int, value func(T) (float64, bool)) []T {
	if maxPoints < 4 || len(series) <= maxPoints {
		return series
	}
	buckets := maxPoints / 2
	kept := make([]bool, len(series))
	kept[0], kept[len(series)-1] = true, true
	for b := 0; b < buckets; b++ {
		lo, hi := b*len(series)/buckets, (b+1)*len(series)/buckets
		minAt, maxAt := -1, -1
		var minV, maxV float64
		for i := lo; i < hi; i++ {
			v, ok := value(series[i])
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
			kept[lo] = true
			continue
		}
		kept[minAt], kept[maxAt] = true, true
	}
	out := make([]T, 0, maxPoints+2)
	for i, k := range kept {
		if k {
			out = append(out, series[i])
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
