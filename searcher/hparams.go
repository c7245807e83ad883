package searcher

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// maxGridSize bounds a grid so that its size and indices fit an int32 column.
const maxGridSize = math.MaxInt32

// sortedNames returns the names of a space in order: every walk over a space
// (sampling, grid axes) uses it so that results do not depend on map order.
func sortedNames(space expconf.Hyperparameters) []string {
	names := make([]string, 0, len(space))
	for name := range space {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// validateSpace checks a hyperparameter space; grid additionally requires a
// count on every int, double and log hyperparameter.
func validateSpace(space expconf.Hyperparameters, grid bool) error {
	return validateLevel(space, nil, grid)
}

func validateLevel(space expconf.Hyperparameters, route []string, grid bool) error {
	for _, name := range sortedNames(space) {
		path := append(slices.Clone(route), name)
		if err := validateOne(space[name], path, grid); err != nil {
			return err
		}
	}
	return nil
}

func validateOne(h expconf.Hyperparameter, route []string, grid bool) error {
	where := "hyperparameters." + strings.Join(route, ".")
	bad := func(format string, args ...any) error {
		return resolute.Errorf(resolute.EInvalid, where+": "+format, args...)
	}
	switch h.Type {
	case expconf.HPConst:
		return nil
	case expconf.HPCategorical:
		if len(h.Vals) == 0 {
			return bad("categorical needs at least one value in vals")
		}
		return nil
	case expconf.HPNested:
		return validateLevel(h.Nested, route, grid)
	case expconf.HPInt, expconf.HPDouble, expconf.HPLog:
	default:
		return bad("unknown hyperparameter type %q", h.Type)
	}
	if math.IsNaN(h.MinVal) || math.IsNaN(h.MaxVal) || math.IsInf(h.MinVal, 0) || math.IsInf(h.MaxVal, 0) {
		return bad("minval and maxval must be finite")
	}
	if h.MinVal > h.MaxVal {
		return bad("minval %v is greater than maxval %v", h.MinVal, h.MaxVal)
	}
	if h.Type == expconf.HPInt && (h.MinVal != math.Trunc(h.MinVal) || h.MaxVal != math.Trunc(h.MaxVal)) {
		return bad("int minval and maxval must be integers")
	}
	if h.Type == expconf.HPLog && (h.Base < 0 || h.Base == 1) {
		return bad("log base must be positive and not 1")
	}
	if h.Count != nil && *h.Count < 1 {
		return bad("count must be at least 1")
	}
	if grid && h.Count == nil {
		return bad("grid search needs a count on %s hyperparameters", h.Type)
	}
	return nil
}

func logBase(h expconf.Hyperparameter) float64 {
	if h.Base == 0 {
		return 10
	}
	return h.Base
}

// sampleSpace draws one point of the space, walking names in sorted order.
func sampleSpace(space expconf.Hyperparameters, r *rand.Rand) map[string]any {
	out := make(map[string]any, len(space))
	for _, name := range sortedNames(space) {
		out[name] = sampleOne(space[name], r)
	}
	return out
}

// sampleOne draws one value: int uniformly in [minval, maxval] (both ends
// included), double uniformly in [minval, maxval), log as base^uniform,
// categorical uniformly among vals.
func sampleOne(h expconf.Hyperparameter, r *rand.Rand) any {
	switch h.Type {
	case expconf.HPInt:
		lo, hi := int(h.MinVal), int(h.MaxVal)
		return lo + r.IntN(hi-lo+1)
	case expconf.HPDouble:
		return h.MinVal + r.Float64()*(h.MaxVal-h.MinVal)
	case expconf.HPLog:
		return math.Pow(logBase(h), h.MinVal+r.Float64()*(h.MaxVal-h.MinVal))
	case expconf.HPCategorical:
		return h.Vals[r.IntN(len(h.Vals))]
	case expconf.HPNested:
		return sampleSpace(h.Nested, r)
	default: // const; validateSpace rejected every other type
		return h.Val
	}
}

// gridAxis is every value one leaf hyperparameter takes in a grid, with the
// route of names that leads to it.
type gridAxis struct {
	route  []string
	values []any
}

// gridAxes lists the axes of a grid in the order Determined uses: names sorted
// at each level, nested hyperparameters expanded in place.
func gridAxes(space expconf.Hyperparameters, route []string) []gridAxis {
	var axes []gridAxis
	for _, name := range sortedNames(space) {
		h := space[name]
		path := append(slices.Clone(route), name)
		if h.Type == expconf.HPNested {
			if len(h.Nested) == 0 {
				// Keep the empty map in every point, as sampling does.
				axes = append(axes, gridAxis{route: path, values: []any{map[string]any{}}})
				continue
			}
			axes = append(axes, gridAxes(h.Nested, path)...)
			continue
		}
		axes = append(axes, gridAxis{route: path, values: gridValues(h)})
	}
	return axes
}

// gridValues returns the points of one hyperparameter: count evenly spaced
// values over [minval, maxval] (over the exponents for log; the midpoint when
// count is 1). An int range clamps count to the number of integers in it and
// rounds each point half away from zero, which keeps the points distinct.
func gridValues(h expconf.Hyperparameter) []any {
	switch h.Type {
	case expconf.HPConst:
		return []any{h.Val}
	case expconf.HPCategorical:
		return slices.Clone(h.Vals)
	}
	count := *h.Count
	lo, hi := h.MinVal, h.MaxVal
	if h.Type == expconf.HPInt {
		count = min(count, int(hi-lo)+1)
	}
	vals := make([]any, count)
	for i := range count {
		x := (lo + hi) / 2
		if count > 1 {
			x = lo + float64(i)*(hi-lo)/float64(count-1)
		}
		switch h.Type {
		case expconf.HPInt:
			vals[i] = int(math.Round(x))
		case expconf.HPLog:
			vals[i] = math.Pow(logBase(h), x)
		default:
			vals[i] = x
		}
	}
	return vals
}

// gridSize is the number of points of the cartesian product of axes; an
// empty space is one point with no hyperparameters.
func gridSize(axes []gridAxis) (int, error) {
	n := 1
	for _, a := range axes {
		if len(a.values) > maxGridSize/n {
			return 0, resolute.Errorf(resolute.EInvalid, "the grid has more than %d points", maxGridSize)
		}
		n *= len(a.values)
	}
	return n, nil
}

// gridPoint returns point k of the cartesian product, the first axis varying
// slowest, as a fresh nested map.
func gridPoint(axes []gridAxis, k int) map[string]any {
	idx := make([]int, len(axes))
	for j := len(axes) - 1; j >= 0; j-- {
		n := len(axes[j].values)
		idx[j] = k % n
		k /= n
	}
	out := map[string]any{}
	for j, a := range axes {
		m := out
		for _, name := range a.route[:len(a.route)-1] {
			sub, ok := m[name].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[name] = sub
			}
			m = sub
		}
		v := a.values[idx[j]]
		if empty, ok := v.(map[string]any); ok && len(empty) == 0 {
			v = map[string]any{}
		}
		m[a.route[len(a.route)-1]] = v
	}
	return out
}
