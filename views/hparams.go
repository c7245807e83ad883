package views

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Geometry of the parallel coordinates plot, in SVG user units; the SVG
// scales to its box, as wide as its axes need (pcStep apart), so that it
// fits a phone with few axes.
const (
	pcHeight                   = 340.0
	pcLeft, pcRight            = 60.0, 90.0
	pcStep                     = 170.0
	pcTop, pcBottom            = 36.0, 44.0
	pcCategoricalLabelMaxChars = 20
)

// pcAxis is one vertical axis of the parallel coordinates plot.
type pcAxis struct {
	Name  string
	X     float64
	Ticks []pcTick
	y     func(v any) (float64, bool) // where a value sits on the axis
}

// pcTick is a labelled point of an axis.
type pcTick struct {
	Y     float64
	Label string
	Full  string // the label unshortened
}

// pcLine is one trial across the axes.
type pcLine struct {
	TrialID int64
	Points  string // SVG polyline points
	Ys      string // its y on each axis, "-" where it has no value (brushing reads them)
	Color   string
	Title   string
	metric  float64
}

// parallelPlot lays the trials out on an axis per varying hyperparameter
// and one for the metric, last.
type parallelPlot struct {
	Width float64
	Axes  []pcAxis
	Lines []pcLine
}

// Varying are the hyperparameters that take more than one value across the
// trials: the only ones worth an axis or a scatter plot.
func (d HParamData) Varying() []int {
	var out []int
	for i := range d.Names {
		seen := map[string]bool{}
		for _, t := range d.Trials {
			seen[fmt.Sprint(t.Values[i])] = true
		}
		if len(seen) > 1 {
			out = append(out, i)
		}
	}
	return out
}

func (d HParamData) parallel() parallelPlot {
	var p parallelPlot
	cols := d.Varying()
	n := len(cols) + 1
	step := pcStep
	p.Width = pcLeft + pcRight + step*float64(max(n-1, 1))
	for k, i := range cols {
		values := make([]any, len(d.Trials))
		for j, t := range d.Trials {
			values[j] = t.Values[i]
		}
		p.Axes = append(p.Axes, axisFor(d.Names[i], pcLeft+float64(k)*step, values, d.isLog(i)))
	}
	metrics := make([]any, len(d.Trials))
	for j, t := range d.Trials {
		metrics[j] = t.Metric
	}
	p.Axes = append(p.Axes, axisFor(d.Metric, pcLeft+float64(n-1)*step, metrics, false))
	lo, hi := metricRange(d.Trials)
	for _, t := range d.Trials {
		var pts, ys, title []string
		for k, a := range p.Axes {
			v := any(t.Metric)
			if k < len(cols) {
				v = t.Values[cols[k]]
			}
			if y, ok := a.y(v); ok {
				pts = append(pts, num(a.X)+","+num(y))
				ys = append(ys, num(y))
			} else {
				ys = append(ys, "-")
			}
			title = append(title, a.Name+" = "+valueText(v))
		}
		p.Lines = append(p.Lines, pcLine{TrialID: t.ID, metric: t.Metric, Points: strings.Join(pts, " "), Ys: strings.Join(ys, " "),
			Color: metricColor(t.Metric, lo, hi, d.SmallerIsBetter), Title: "Trial " + itoa(t.ID) + ": " + strings.Join(title, ", ")})
	}
	// The best trials are drawn last, on top.
	slices.SortStableFunc(p.Lines, func(a, b pcLine) int {
		if d.SmallerIsBetter {
			return cmp.Compare(b.metric, a.metric)
		}
		return cmp.Compare(a.metric, b.metric)
	})
	return p
}

// isLog says whether the i-th hyperparameter is searched on a log scale.
func (d HParamData) isLog(i int) bool { return i < len(d.Log) && d.Log[i] }

// axisFor makes a numeric axis when every value is a number (logarithmic
// when log and every value is positive), else one with a step per distinct
// value.
func axisFor(name string, x float64, values []any, log bool) pcAxis {
	a := pcAxis{Name: name, X: x}
	top, bottom := pcTop, pcHeight-pcBottom
	numeric := true
	lo, hi := math.Inf(1), math.Inf(-1)
	var cats []string
	for _, v := range values {
		switch v := v.(type) {
		case float64:
			lo, hi = min(lo, v), max(hi, v)
		case nil:
		default:
			numeric = false
		}
		if v != nil && !slices.Contains(cats, valueText(v)) {
			cats = append(cats, valueText(v))
		}
	}
	if numeric && !math.IsInf(lo, 0) {
		scale := func(f float64) float64 { return f }
		if log && lo > 0 {
			scale = math.Log10
		}
		at := func(f float64) float64 {
			if hi == lo {
				return (top + bottom) / 2
			}
			return bottom - (scale(f)-scale(lo))/(scale(hi)-scale(lo))*(bottom-top)
		}
		a.y = func(v any) (float64, bool) {
			f, ok := v.(float64)
			return at(f), ok
		}
		for _, v := range axisTicks(lo, hi, log && lo > 0) {
			a.Ticks = append(a.Ticks, pcTick{Y: at(v), Label: valueText(v), Full: valueText(v)})
		}
		return a
	}
	slices.Sort(cats)
	at := func(i int) float64 {
		if len(cats) < 2 {
			return (top + bottom) / 2
		}
		return bottom - float64(i)/float64(len(cats)-1)*(bottom-top)
	}
	a.y = func(v any) (float64, bool) {
		i := slices.Index(cats, valueText(v))
		return at(i), i >= 0
	}
	for i, c := range cats {
		a.Ticks = append(a.Ticks, pcTick{Y: at(i), Label: shorten(c, pcCategoricalLabelMaxChars), Full: c})
	}
	return a
}

// axisTicks are round values to label a numeric axis from lo to hi: about
// five evenly apart, or on a log axis the powers of ten (and 2 and 5 times
// them over few decades) between; the ends where fewer than two fall
// inside.
func axisTicks(lo, hi float64, log bool) []float64 {
	if hi == lo {
		return []float64{lo}
	}
	var out []float64
	if log {
		decades := math.Log10(hi / lo)
		mults := []float64{1}
		if decades <= 2 {
			mults = []float64{1, 2, 5}
		}
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mults {
				v := roundSig(m * math.Pow(10, e))
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					out = append(out, v)
				}
			}
		}
	} else {
		raw := (hi - lo) / 5
		mag := math.Pow(10, math.Floor(math.Log10(raw)))
		step := 10 * mag
		for _, m := range []float64{1, 2, 2.5, 5} {
			if m*mag >= raw {
				step = m * mag
				break
			}
		}
		for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
			out = append(out, roundSig(v))
		}
	}
	if len(out) < 2 {
		return []float64{lo, hi}
	}
	return out
}

// roundSig drops the float noise of adding steps (0.30000000000000004).
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return f
}

func metricRange(trials []HParamTrial) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range trials {
		lo, hi = min(lo, t.Metric), max(hi, t.Metric)
	}
	return lo, hi
}

// metricColor runs from blue for the best value to orange for the worst.
func metricColor(v, lo, hi float64, smallerIsBetter bool) string {
	f := 0.0
	if hi > lo {
		f = (v - lo) / (hi - lo)
	}
	if !smallerIsBetter {
		f = 1 - f
	}
	// hue 212 (blue) to 24 (orange), darker towards the worst.
	return fmt.Sprintf("hsl(%d, 70%%, %d%%)", int(212-188*f), int(42+8*f))
}

// scatterJSON is what web/static/hparams.js needs for the scatter plot of
// the i-th hyperparameter: numeric x values, or categories and indices.
func (d HParamData) scatterJSON(i int) string {
	type plot struct {
		Name       string   `json:"name"`
		Metric     string   `json:"metric"`
		Categories []string `json:"categories,omitempty"`
		Log        bool     `json:"log,omitempty"`
		Points     [][3]any `json:"points"` // x, metric, trial id
	}
	p := plot{Name: d.Names[i], Metric: d.Metric, Points: [][3]any{}}
	numeric, positive := true, true
	for _, t := range d.Trials {
		f, ok := t.Values[i].(float64)
		if !ok && t.Values[i] != nil {
			numeric = false
		}
		positive = positive && (!ok || f > 0)
	}
	p.Log = numeric && positive && d.isLog(i)
	if !numeric {
		for _, t := range d.Trials {
			if c := valueText(t.Values[i]); t.Values[i] != nil && !slices.Contains(p.Categories, c) {
				p.Categories = append(p.Categories, c)
			}
		}
		slices.Sort(p.Categories)
	}
	for _, t := range d.Trials {
		switch v := t.Values[i].(type) {
		case nil:
		case float64:
			p.Points = append(p.Points, [3]any{v, t.Metric, t.ID})
		default:
			p.Points = append(p.Points, [3]any{slices.Index(p.Categories, valueText(v)), t.Metric, t.ID})
		}
	}
	data, _ := json.Marshal(p)
	return string(data)
}

// valueText shows a hyperparameter's value: numbers with six significant
// digits, strings as they are, anything else as JSON.
func valueText(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case string:
		return v
	case nil:
		return "–"
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
