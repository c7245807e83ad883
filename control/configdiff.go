package control

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// ConfigRow is one dotted config key across the compared experiments.
type ConfigRow struct {
	Key    string
	Values []string // one per experiment, in order; "" where it lacks the key
	Differ bool     // the values are not all the same
}

// DiffConfigs flattens each expanded config to dotted keys
// ("hyperparameters.lr.val") and lines the values up, key by key in sorted
// order; Differ marks the rows a comparison should show.
func DiffConfigs(configs []json.RawMessage) []ConfigRow {
	flat := make([]map[string]string, len(configs))
	keys := map[string]bool{}
	for i, c := range configs {
		flat[i] = map[string]string{}
		var v any
		if json.Unmarshal(c, &v) == nil {
			flatten("", v, flat[i])
		}
		for k := range flat[i] {
			keys[k] = true
		}
	}
	var rows []ConfigRow
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		row := ConfigRow{Key: k}
		for i, f := range flat {
			row.Values = append(row.Values, f[k])
			if i > 0 && f[k] != flat[0][k] {
				row.Differ = true
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// flatten writes v's leaves under prefix; lists are indexed ("a.0") and an
// empty object or list is a leaf of its own.
func flatten(prefix string, v any, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 && prefix != "" {
			out[prefix] = "{}"
		}
		for k, x := range v {
			flatten(join(k), x, out)
		}
	case []any:
		if len(v) == 0 {
			out[prefix] = "[]"
		}
		for i, x := range v {
			flatten(join(strconv.Itoa(i)), x, out)
		}
	case nil:
		out[prefix] = "null"
	case string:
		out[prefix] = v
	default:
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
}
