package masterconf

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FieldError is one problem with one key.
type FieldError struct {
	Path    string
	Message string
	Line    int // in master.yaml, when known
}

// Errors lists every problem found, one per line when printed.
type Errors []FieldError

// Error implements error.
func (errs Errors) Error() string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Path + ": " + e.Message
		if e.Line > 0 {
			lines[i] += fmt.Sprintf(" (line %d)", e.Line)
		}
	}
	return strings.Join(lines, "\n")
}

var durationType = reflect.TypeOf(Duration{})

// decode sets the fields of v (a pointer to a struct) from node, collecting
// an error for every unknown key and every value of the wrong type.
func decode(node *yaml.Node, v reflect.Value, path string, errs *Errors) {
	if node.Kind == yaml.DocumentNode {
		if len(node.Content) == 0 {
			return
		}
		node = node.Content[0]
	}
	if node.Kind == yaml.AliasNode {
		node = node.Alias
	}
	if node.Tag == "!!null" {
		return
	}
	bad := func(format string, args ...any) {
		*errs = append(*errs, FieldError{Path: displayPath(path), Message: fmt.Sprintf(format, args...), Line: node.Line})
	}
	t := v.Type()
	switch {
	case t == durationType:
		var s string
		if node.Kind != yaml.ScalarNode || node.Decode(&s) != nil {
			bad("expected a duration like 30m or 168h")
			return
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			bad("expected a duration like 30m or 168h, got %q", s)
			return
		}
		v.Set(reflect.ValueOf(Duration{d}))
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		p := reflect.New(t.Elem())
		decode(node, p.Elem(), path, errs)
		v.Set(p)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Int:
		if node.Kind != yaml.SequenceNode {
			bad("expected a list of integers")
			return
		}
		s := reflect.MakeSlice(t, len(node.Content), len(node.Content))
		for i, item := range node.Content {
			decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), errs)
		}
		v.Set(s)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		// A list, or (from a flag or variable) one comma-separated string.
		var items []string
		switch node.Kind {
		case yaml.SequenceNode:
			for i, item := range node.Content {
				if item.Kind != yaml.ScalarNode {
					*errs = append(*errs, FieldError{Path: fmt.Sprintf("%s[%d]", path, i), Message: "expected a string", Line: item.Line})
					continue
				}
				items = append(items, item.Value)
			}
		case yaml.ScalarNode:
			for _, item := range strings.Split(node.Value, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
		default:
			bad("expected a list of strings")
			return
		}
		v.Set(reflect.ValueOf(items).Convert(t))
	case t.Kind() == reflect.Struct:
		if node.Kind != yaml.MappingNode {
			bad("expected a map of keys")
			return
		}
		fields := fieldsByKey(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key, val := node.Content[i].Value, node.Content[i+1]
			idx, ok := fields[key]
			if !ok {
				*errs = append(*errs, FieldError{Path: join(path, key), Message: unknownKey(key, fields), Line: node.Content[i].Line})
				continue
			}
			decode(val, v.Field(idx), join(path, key), errs)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if node.Kind != yaml.SequenceNode {
			bad("expected a list")
			return
		}
		s := reflect.MakeSlice(t, len(node.Content), len(node.Content))
		for i, item := range node.Content {
			decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), errs)
		}
		v.Set(s)
	case t.Kind() == reflect.Map:
		if node.Kind != yaml.MappingNode {
			bad("expected a map of keys")
			return
		}
		m := reflect.New(t)
		if err := node.Decode(m.Interface()); err != nil {
			bad("expected a map of keys: %s", yamlReason(err))
			return
		}
		v.Set(m.Elem())
	default:
		if node.Kind != yaml.ScalarNode {
			bad("expected %s", kindName(t.Kind()))
			return
		}
		p := reflect.New(t)
		if err := node.Decode(p.Interface()); err != nil {
			bad("expected %s, got %q", kindName(t.Kind()), node.Value)
			return
		}
		v.Set(p.Elem())
	}
}

// fieldsByKey maps yaml keys to field indexes.
func fieldsByKey(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			m[tag] = i
		}
	}
	return m
}

// leaves lists the dotted paths of every scalar key of t, for flags and
// environment variables.
func leaves(t reflect.Type, prefix string) []string {
	var out []string
	keys := fieldsByKey(t)
	for key, i := range keys {
		ft := t.Field(i).Type
		switch {
		case ft == durationType:
			out = append(out, join(prefix, key))
		case ft.Kind() == reflect.Struct:
			out = append(out, leaves(ft, join(prefix, key))...)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			out = append(out, leaves(ft.Elem(), join(prefix, key))...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			out = append(out, join(prefix, key)) // comma-separated as a flag
		case ft.Kind() == reflect.Map || ft.Kind() == reflect.Slice:
		default:
			out = append(out, join(prefix, key))
		}
	}
	sort.Strings(out)
	return out
}

func unknownKey(key string, fields map[string]int) string {
	// Near means at most 2 edits away, 1 for short keys.
	limit := 2
	if len(key) < 4 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for known := range fields {
		if d := editDistance(key, known); d < bestDist || (d == bestDist && known < best) {
			best, bestDist = known, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key (did you mean %s?)", best)
	}
	return "unknown key"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return k.String()
}

func yamlReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func displayPath(p string) string {
	if p == "" {
		return "(top level)"
	}
	return p
}
