package db

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// The points a series keeps (migration 00021 defines them): of its steps
// cut into fineBuckets buckets of a power-of-two width at multiples of it,
// each bucket's smallest value (the earliest of equal ones), largest (the
// latest) and last, plus the series' first; those of coarseBuckets buckets
// marked coarse. InsertMetrics merges a batch's values here, in Go, where
// the triggers of metrics would spend tens of microseconds a value in SQL;
// the triggers still keep what other statements write (a bulk load, a
// changed or hidden report), and both keep the same points.
const fineBuckets, coarseBuckets = 128, 16

// seriesWidth is the smallest power of two w that cuts steps f..l into
// fewer than k buckets of w steps at multiples of w (metric_series_width).
func seriesWidth(f, l, k int64) int64 {
	w := int64(1)
	for l/w-f/w >= k {
		w *= 2
	}
	return w
}

// seriesKey names a series: a trial's metric of one group.
type seriesKey struct {
	trial         int64
	group, metric string
}

// keptPoint is a value of a series: one metric_points stores, or a new one.
type keptPoint struct {
	step, report      int64
	value             float64
	at                time.Time
	epoch             *float64
	stored, wasCoarse bool
}

// keepPoints says which of a series' points (in step and report order: the
// stored ones of the buckets that change, and the new ones) it keeps, and
// which of those are coarse; first is the series' first step.
func keepPoints(pts []keptPoint, first, width, coarseWidth int64) (keep, coarse []bool) {
	keep, coarse = make([]bool, len(pts)), make([]bool, len(pts))
	if len(pts) > 0 && pts[0].step == first {
		keep[0], coarse[0] = true, true
	}
	mark := func(of []bool, w int64, among []bool) {
		lo, hi, last, bucket := -1, -1, -1, int64(0)
		flush := func() {
			if last >= 0 {
				of[lo], of[hi], of[last] = true, true, true
			}
		}
		for i, p := range pts {
			if among != nil && !among[i] {
				continue
			}
			if b := p.step / w; last < 0 || b != bucket {
				flush()
				lo, hi, bucket = i, i, b
			}
			if p.value < pts[lo].value {
				lo = i
			}
			if p.value >= pts[hi].value {
				hi = i
			}
			last = i
		}
		flush()
	}
	mark(keep, width, nil)
	mark(coarse, coarseWidth, keep)
	return keep, coarse
}

// seriesValues are the values of a report's avg_metrics that series keep:
// numbers a float8 holds (metric_series_float), and its epoch.
func seriesValues(metrics []byte) (map[string]float64, *float64) {
	var body struct {
		AvgMetrics map[string]json.RawMessage `json:"avg_metrics"`
	}
	if json.Unmarshal(metrics, &body) != nil {
		return nil, nil
	}
	out := map[string]float64{}
	for k, raw := range body.AvgMetrics {
		if v, ok := seriesFloat(raw); ok {
			out[k] = v
		}
	}
	var epoch *float64
	for _, name := range []string{"epochs", "epoch"} {
		if v, ok := out[name]; ok {
			epoch = &v
			break
		}
	}
	return out, epoch
}

// seriesFloat is a JSON number as a float8, unless out of its range.
func seriesFloat(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if a := math.Abs(v); err != nil || (v != 0 && (a < 1e-300 || a > 1e300)) {
		return 0, false
	}
	return v, true
}

// storedReport is a report InsertMetrics stored (not merged into one
// stored before).
type storedReport struct {
	id, trial, steps int64
	group            string
	metrics          []byte
	at               time.Time
}

// seriesHead is a row of metric_series.
type seriesHead struct {
	first, last, width, coarseWidth, reports int64
	lastValue, min, max                      float64
}

// mergeSeries merges the values of reports newly stored into their series,
// in the transaction that stored them, after their trials were locked.
func mergeSeries(ctx context.Context, tx pgx.Tx, reports []storedReport) error {
	added := map[seriesKey][]keptPoint{}
	for _, r := range reports {
		values, epoch := seriesValues(r.metrics)
		for m, v := range values {
			k := seriesKey{r.trial, r.group, m}
			added[k] = append(added[k], keptPoint{step: r.steps, report: r.id, value: v, at: r.at, epoch: epoch})
		}
	}
	if len(added) == 0 {
		return nil
	}
	keys := make([]seriesKey, 0, len(added))
	for k := range added {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(cmp.Compare(a.trial, b.trial), cmp.Compare(a.group, b.group), cmp.Compare(a.metric, b.metric))
	})
	trials, groups, metrics := make([]int64, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		trials[i], groups[i], metrics[i] = k.trial, k.group, k.metric
		slices.SortFunc(added[k], byStep)
	}

	// 1. The series' heads, and the points stored in the buckets that
	// change: from the coarse bucket of the first new value on (the whole
	// series when a width grows or a value comes before its first), as
	// step 2 reckons it again.
	los, his := make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		los[i], his[i] = added[k][0].step, added[k][len(added[k])-1].step
	}
	rows, err := tx.Query(ctx, `WITH k AS MATERIALIZED (
		  SELECT w.*, CASE WHEN w.w <> w.width OR w.cw <> w.coarse_width OR w.lo < w.first_step OR w.lo < 0 THEN '-9223372036854775808'::bigint
		    ELSE w.lo / w.cw * w.cw END AS from_step
		  FROM (SELECT k.*, h.first_step, h.last_step, h.width, h.coarse_width, h.reports, h.last_value, h.min_value, h.max_value,
		    metric_series_width(LEAST(k.lo, h.first_step), GREATEST(k.hi, h.last_step), 128) AS w,
		    metric_series_width(LEAST(k.lo, h.first_step), GREATEST(k.hi, h.last_step), 16) AS cw
		  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS k(trial_id, group_name, metric, lo, hi)
		  JOIN metric_series h ON h.trial_id = k.trial_id AND h.group_name = k.group_name AND h.metric = k.metric) w)
		SELECT k.trial_id, k.group_name, k.metric, k.first_step, k.last_step, k.width, k.coarse_width, k.reports, k.last_value, k.min_value, k.max_value,
		  p.step, p.report_id, p.value, p.reported_at, p.epoch, p.coarse
		FROM k LEFT JOIN LATERAL (SELECT * FROM metric_points p WHERE p.trial_id = k.trial_id AND p.group_name = k.group_name AND p.metric = k.metric
		  AND p.step >= k.from_step) p ON true`, trials, groups, metrics, los, his)
	if err != nil {
		return err
	}
	heads := map[seriesKey]seriesHead{}
	stored := map[seriesKey][]keptPoint{}
	var k seriesKey
	var h seriesHead
	var step, report *int64
	var value *float64
	var p keptPoint
	var coarse *bool
	var at *time.Time
	_, err = pgx.ForEachRow(rows, []any{&k.trial, &k.group, &k.metric, &h.first, &h.last, &h.width, &h.coarseWidth, &h.reports,
		&h.lastValue, &h.min, &h.max, &step, &report, &value, &at, &p.epoch, &coarse}, func() error {
		heads[k] = h
		if step != nil {
			p.step, p.report, p.value, p.at, p.wasCoarse, p.stored = *step, *report, *value, *at, *coarse, true
			stored[k] = append(stored[k], p)
		}
		p.epoch = nil
		return nil
	})
	if err != nil {
		return err
	}

	// 2. The heads after.
	next := make(map[seriesKey]seriesHead, len(keys))
	for _, k := range keys {
		pts := added[k]
		lo, hi := pts[0].step, pts[len(pts)-1].step
		old, found := heads[k]
		n := seriesHead{first: lo, last: hi, reports: int64(len(pts)), lastValue: pts[len(pts)-1].value, min: pts[0].value, max: pts[0].value}
		for _, p := range pts {
			n.min, n.max = min(n.min, p.value), max(n.max, p.value)
		}
		if found {
			n.first, n.last, n.reports = min(lo, old.first), max(hi, old.last), old.reports+n.reports
			n.min, n.max = min(n.min, old.min), max(n.max, old.max)
			if hi < old.last {
				n.lastValue = old.lastValue
			}
		}
		n.width, n.coarseWidth = seriesWidth(n.first, n.last, fineBuckets), seriesWidth(n.first, n.last, coarseBuckets)
		next[k] = n
	}

	// 3. What each keeps, and the changes to write.
	var w pointWrites
	for _, k := range keys {
		pts := append(stored[k], added[k]...)
		slices.SortFunc(pts, byStep)
		n := next[k]
		keep, coarse := keepPoints(pts, n.first, n.width, n.coarseWidth)
		for i, p := range pts {
			switch {
			case p.stored && !keep[i]:
				w.gone.add(k, p, false)
			case p.stored && coarse[i] != p.wasCoarse:
				w.moved.add(k, p, coarse[i])
			case !p.stored && keep[i]:
				w.added.add(k, p, coarse[i])
			}
		}
	}

	// 4. One round trip writes them.
	b := &pgx.Batch{}
	if len(w.gone.trials) > 0 {
		b.Queue(`DELETE FROM metric_points p USING unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS d(trial_id, group_name, metric, step, report_id)
			WHERE p.trial_id = d.trial_id AND p.group_name = d.group_name AND p.metric = d.metric AND p.step = d.step AND p.report_id = d.report_id`,
			w.gone.trials, w.gone.groups, w.gone.metrics, w.gone.steps, w.gone.reports)
	}
	if len(w.moved.trials) > 0 {
		b.Queue(`UPDATE metric_points p SET coarse = u.coarse
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bool[]) AS u(trial_id, group_name, metric, step, report_id, coarse)
			WHERE p.trial_id = u.trial_id AND p.group_name = u.group_name AND p.metric = u.metric AND p.step = u.step AND p.report_id = u.report_id`,
			w.moved.trials, w.moved.groups, w.moved.metrics, w.moved.steps, w.moved.reports, w.moved.coarse)
	}
	if len(w.added.trials) > 0 {
		b.Queue(`INSERT INTO metric_points (trial_id, group_name, metric, step, report_id, value, reported_at, epoch, coarse)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::float8[], $7::timestamptz[], $8::float8[], $9::bool[])`,
			w.added.trials, w.added.groups, w.added.metrics, w.added.steps, w.added.reports, w.added.values, w.added.ats, w.added.epochs, w.added.coarse)
	}
	hd := struct {
		first, last, width, cw, reports []int64
		lastValue, min, max             []float64
	}{}
	for _, k := range keys {
		n := next[k]
		hd.first, hd.last, hd.width, hd.cw, hd.reports = append(hd.first, n.first), append(hd.last, n.last), append(hd.width, n.width),
			append(hd.cw, n.coarseWidth), append(hd.reports, n.reports)
		hd.lastValue, hd.min, hd.max = append(hd.lastValue, n.lastValue), append(hd.min, n.min), append(hd.max, n.max)
	}
	b.Queue(`INSERT INTO metric_series AS h (trial_id, group_name, metric, first_step, last_step, width, coarse_width, reports, last_value, min_value, max_value)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::float8[], $10::float8[], $11::float8[])
		ON CONFLICT (trial_id, group_name, metric) DO UPDATE SET first_step = EXCLUDED.first_step, last_step = EXCLUDED.last_step,
		  width = EXCLUDED.width, coarse_width = EXCLUDED.coarse_width, reports = EXCLUDED.reports,
		  last_value = EXCLUDED.last_value, min_value = EXCLUDED.min_value, max_value = EXCLUDED.max_value`,
		trials, groups, metrics, hd.first, hd.last, hd.width, hd.cw, hd.reports, hd.lastValue, hd.min, hd.max)
	return tx.SendBatch(ctx, b).Close()
}

func byStep(a, b keptPoint) int {
	return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.report, b.report))
}

// pointRows are metric_points rows as columns, for unnest.
type pointRows struct {
	trials          []int64
	groups, metrics []string
	steps, reports  []int64
	values          []float64
	ats             []time.Time
	epochs          []*float64
	coarse          []bool
}

func (r *pointRows) add(k seriesKey, p keptPoint, coarse bool) {
	r.trials, r.groups, r.metrics = append(r.trials, k.trial), append(r.groups, k.group), append(r.metrics, k.metric)
	r.steps, r.reports, r.values = append(r.steps, p.step), append(r.reports, p.report), append(r.values, p.value)
	r.ats, r.epochs, r.coarse = append(r.ats, p.at), append(r.epochs, p.epoch), append(r.coarse, coarse)
}

// pointWrites are the changes a merge writes to metric_points.
type pointWrites struct{ gone, moved, added pointRows }
