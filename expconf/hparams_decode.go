package expconf

import (
	"math"

	"gopkg.in/yaml.v3"
)

// DefaultLogBase is the base of a `log` hyperparameter when none is given.
const DefaultLogBase = 10

func (d *decoder) hyperparameters(n *yaml.Node, path string, depth int) Hyperparameters {
	hps := Hyperparameters{}
	o := d.object(n, path)
	for _, name := range o.order {
		hps[name] = d.hyperparameter(o.take(name), join(path, name), depth)
	}
	o.done()
	return hps
}

func (d *decoder) hyperparameter(n *yaml.Node, path string, depth int) Hyperparameter {
	if d.hpNodes == nil {
		d.hpNodes = map[string]*yaml.Node{}
	}
	d.hpNodes[path] = n
	if n == nil || n.Kind != yaml.MappingNode {
		// A bare scalar or list is a constant.
		v, _ := d.value(n, path)
		return Hyperparameter{Type: HPConst, Val: v}
	}
	o := d.object(n, path)
	if _, typed := o.vals["type"]; !typed {
		if depth > 32 {
			d.fail(n, path, "hyperparameters nested too deeply")
			return Hyperparameter{Type: HPNested, Nested: Hyperparameters{}}
		}
		return Hyperparameter{Type: HPNested, Nested: d.hyperparameters(n, path, depth+1)}
	}
	var hp Hyperparameter
	types := []string{HPConst, HPInt, HPDouble, HPLog, HPCategorical}
	if !o.str("type", &hp.Type) {
		if !o.has("type") {
			d.fail(o.keyNode("type"), join(path, "type"), "must be one of %s, got null", orList(types))
		}
		markAll(o)
		return hp
	}
	if !d.oneOf(o.take("type"), join(path, "type"), hp.Type, types...) {
		for _, k := range o.order {
			o.asked[k] = true
		}
		return hp
	}
	switch hp.Type {
	case HPConst:
		if vn := o.take("val"); vn != nil {
			hp.Val, _ = d.value(vn, join(path, "val"))
		} else if _, given := o.vals["val"]; !given {
			d.fail(n, join(path, "val"), "required for a const hyperparameter")
		}
	case HPInt, HPDouble, HPLog:
		d.rangeHP(o, &hp)
	case HPCategorical:
		items, ok := o.list("vals")
		switch {
		case !ok && !o.has("vals"):
			d.fail(n, join(path, "vals"), "required for a categorical hyperparameter")
		case ok && len(items) == 0:
			d.fail(o.take("vals"), join(path, "vals"), "must not be empty")
		case ok:
			hp.Vals = make([]any, 0, len(items))
			for i, item := range items {
				v, _ := d.value(item, index(join(path, "vals"), i))
				hp.Vals = append(hp.Vals, v)
			}
		}
	}
	o.done()
	return hp
}

// rangeHP reads minval, maxval, count (and base for log).
func (d *decoder) rangeHP(o *object, hp *Hyperparameter) {
	read := func(key string, dst *float64) bool {
		vn := o.take(key)
		if vn == nil {
			d.fail(o.line(), join(o.path, key), "required for a%s %s hyperparameter", article(hp.Type), hp.Type)
			return false
		}
		if hp.Type == HPInt {
			v, ok := d.integer(vn, join(o.path, key))
			*dst = float64(v)
			return ok
		}
		v, ok := d.number(vn, join(o.path, key))
		*dst = v
		return ok
	}
	okMin := read("minval", &hp.MinVal)
	okMax := read("maxval", &hp.MaxVal)
	if okMin && okMax && hp.MinVal >= hp.MaxVal {
		d.fail(o.take("minval"), join(o.path, "minval"), "must be less than maxval (got %s >= %s)",
			fmtNum(hp.MinVal), fmtNum(hp.MaxVal))
	}
	if hp.Type == HPLog {
		hp.Base = DefaultLogBase
		if o.number("base", &hp.Base) && hp.Base <= 0 {
			d.fail(o.take("base"), join(o.path, "base"), "must be greater than 0, got %s", fmtNum(hp.Base))
		}
	}
	if c := o.intPtr("count"); c != nil {
		hp.Count = c
		if *c < 1 {
			d.fail(o.take("count"), join(o.path, "count"), "must be at least 1, got %d", *c)
		}
	}
}

func article(word string) string {
	if word != "" && (word[0] == 'i' || word[0] == 'a' || word[0] == 'e' || word[0] == 'o' || word[0] == 'u') {
		return "n"
	}
	return ""
}

// fmtNum prints a number as a person would write it in YAML.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return formatInt(int64(f))
	}
	return formatFloat(f)
}

// gridMissingCount reports every int, double and log hyperparameter without
// a count, for the grid searcher.
func (d *decoder) gridMissingCount(hps Hyperparameters, path string, line *yaml.Node) {
	for _, name := range sortedKeys(hps) {
		hp := hps[name]
		switch hp.Type {
		case HPInt, HPDouble, HPLog:
			if hp.Count == nil {
				at := line
				if n := d.hpNodes[join(path, name)]; n != nil {
					at = n
				}
				d.fail(at, join(join(path, name), "count"), "required by the grid searcher for %s hyperparameters", hp.Type)
			}
		case HPNested:
			d.gridMissingCount(hp.Nested, join(path, name), line)
		}
	}
}

// render turns hps back into the YAML-shaped map of the config.
func (hps Hyperparameters) render() map[string]any {
	out := make(map[string]any, len(hps))
	for name, hp := range hps {
		out[name] = hp.render()
	}
	return out
}

func (hp Hyperparameter) render() any {
	switch hp.Type {
	case HPNested:
		return hp.Nested.render()
	case HPConst:
		return map[string]any{"type": HPConst, "val": hp.Val}
	case HPCategorical:
		return map[string]any{"type": HPCategorical, "vals": hp.Vals}
	}
	m := map[string]any{"type": hp.Type}
	if hp.Type == HPInt {
		m["minval"], m["maxval"] = int64(hp.MinVal), int64(hp.MaxVal)
	} else {
		m["minval"], m["maxval"] = hp.MinVal, hp.MaxVal
	}
	if hp.Type == HPLog {
		m["base"] = hp.Base
	}
	if hp.Count != nil {
		m["count"] = *hp.Count
	}
	return m
}
