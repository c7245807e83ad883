package expconf

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

// maxNodes bounds the work done on one document, so YAML alias tricks
// ("billion laughs") cannot make a parse run for ever.
const maxNodes = 200_000

// decoder walks a yaml.Node tree, filling typed values and collecting every
// error and warning on the way.
type decoder struct {
	errs  Errors
	warns []string
	nodes int
	// hpNodes remembers where each hyperparameter was written, by path, for
	// errors found later (grid counts).
	hpNodes map[string]*yaml.Node
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Line: line})
}

func (d *decoder) warn(path, format string, args ...any) {
	d.warns = append(d.warns, path+": "+fmt.Sprintf(format, args...))
}

// resolve follows aliases and unwraps a document node.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < 100; i++ {
		switch {
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.DocumentNode || n.Kind == 0:
			return nil
		default:
			d.nodes++
			return n
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node holds, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a map"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!str":
		return strconv.Quote(n.Value)
	default:
		return n.Value
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// keyHook, when not nil, is told the path of every key the decoder accepts
// (msg "") or refuses (msg its message). Only the key audit's test sets it
// (expconf/keyaudit_test.go), to list the keys this parser knows.
var keyHook func(path, msg string)

// object is a YAML mapping being decoded. Every key a caller asks for (with
// take or one of the typed getters) counts as known; done reports the rest
// as unknown keys, suggesting the nearest known one.
type object struct {
	d     *decoder
	path  string
	node  *yaml.Node
	vals  map[string]*yaml.Node
	keys  map[string]*yaml.Node
	order []string
	asked map[string]bool
}

// object starts decoding n as a mapping at path. A null or missing node is an
// empty mapping; anything else that is not a mapping is an error and also
// yields an empty object, so callers can go on and apply defaults.
func (d *decoder) object(n *yaml.Node, path string) *object {
	o := &object{d: d, path: path, node: n, vals: map[string]*yaml.Node{},
		keys: map[string]*yaml.Node{}, asked: map[string]bool{}}
	n = d.resolve(n)
	if isNull(n) {
		return o
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "expected a map, got %s", describe(n))
		return o
	}
	o.node = n
	o.add(n, false, 0)
	return o
}

func (o *object) add(n *yaml.Node, merged bool, depth int) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := o.d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			continue
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			o.d.fail(k, o.path, "keys must be strings, got %s", describe(k))
			continue
		}
		if _, dup := o.vals[k.Value]; dup {
			if !merged {
				o.d.fail(k, join(o.path, k.Value), "duplicate key")
			}
			continue
		}
		o.vals[k.Value], o.keys[k.Value] = v, k
		o.order = append(o.order, k.Value)
	}
	// YAML merge keys (`<<: *defaults`) fill in keys not given explicitly.
	for _, m := range merges {
		m = o.d.resolve(m)
		if m == nil || depth > 10 || o.d.nodes > maxNodes {
			continue
		}
		switch m.Kind {
		case yaml.MappingNode:
			o.add(m, true, depth+1)
		case yaml.SequenceNode:
			for _, item := range m.Content {
				if item = o.d.resolve(item); item != nil && item.Kind == yaml.MappingNode {
					o.add(item, true, depth+1)
				}
			}
		}
	}
}

// line is the line of the mapping itself, for "required" errors.
func (o *object) line() *yaml.Node { return o.node }

func (o *object) has(key string) bool {
	n, ok := o.vals[key]
	return ok && !isNull(o.d.resolve(n))
}

// take marks key known and returns its resolved value, or nil if absent or
// null.
func (o *object) take(key string) *yaml.Node {
	o.asked[key] = true
	if keyHook != nil {
		keyHook(join(o.path, key), "")
	}
	n := o.d.resolve(o.vals[key])
	if isNull(n) {
		return nil
	}
	return n
}

// keyNode is the node of key itself (for errors about the key).
func (o *object) keyNode(key string) *yaml.Node {
	if k := o.keys[key]; k != nil {
		return k
	}
	return o.node
}

// present lists keys given (non-null) in document order.
func (o *object) present() []string {
	var out []string
	for _, k := range o.order {
		if o.has(k) {
			out = append(out, k)
		}
	}
	return out
}

// done reports every key that no getter asked for.
func (o *object) done() {
	known := make([]string, 0, len(o.asked))
	for k := range o.asked {
		known = append(known, k)
	}
	sort.Strings(known)
	for _, k := range o.order {
		if !o.asked[k] {
			o.d.fail(o.keys[k], join(o.path, k), "unknown key%s", suggest(k, known))
		}
	}
}

// reject marks key known and reports it as an error with msg if present.
func (o *object) reject(key, msg string) {
	o.asked[key] = true
	if keyHook != nil {
		keyHook(join(o.path, key), msg)
	}
	if _, ok := o.vals[key]; ok {
		o.d.fail(o.keys[key], join(o.path, key), "%s", msg)
	}
}

// deprecated marks key known and warns if present; it returns the value.
func (o *object) deprecated(key, msg string) *yaml.Node {
	n := o.take(key)
	if n != nil {
		o.d.warn(join(o.path, key), "%s", msg)
	}
	return n
}

func (o *object) str(key string, dst *string) bool {
	n := o.take(key)
	if n == nil {
		return false
	}
	s, ok := o.d.scalarString(n, join(o.path, key))
	if ok {
		*dst = s
	}
	return ok
}

func (d *decoder) scalarString(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.fail(n, path, "expected a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (o *object) integer(key string, dst *int) bool {
	n := o.take(key)
	if n == nil {
		return false
	}
	v, ok := o.d.integer(n, join(o.path, key))
	if ok {
		*dst = v
	}
	return ok
}

func (o *object) intPtr(key string) *int {
	var v int
	if !o.integer(key, &v) {
		return nil
	}
	return &v
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int":
			var v int64
			if err := n.Decode(&v); err == nil {
				return int(v), true
			}
		case "!!float":
			var f float64
			if err := n.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return int(f), true
			}
		}
	}
	d.fail(n, path, "expected an integer, got %s", describe(n))
	return 0, false
}

func (o *object) number(key string, dst *float64) bool {
	n := o.take(key)
	if n == nil {
		return false
	}
	v, ok := o.d.number(n, join(o.path, key))
	if ok {
		*dst = v
	}
	return ok
}

func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	d.fail(n, path, "expected a number, got %s", describe(n))
	return 0, false
}

func (o *object) boolean(key string, dst *bool) bool {
	n := o.take(key)
	if n == nil {
		return false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			*dst = b
			return true
		}
	}
	o.d.fail(n, join(o.path, key), "expected true or false, got %s", describe(n))
	return false
}

func (o *object) boolPtr(key string) *bool {
	var b bool
	if !o.boolean(key, &b) {
		return nil
	}
	return &b
}

// list returns the items of a sequence at key (nil if absent), failing on
// anything else.
func (o *object) list(key string) ([]*yaml.Node, bool) {
	n := o.take(key)
	if n == nil {
		return nil, false
	}
	return o.d.list(n, join(o.path, key))
}

func (d *decoder) list(n *yaml.Node, path string) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "expected a list, got %s", describe(n))
		return nil, false
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for _, item := range n.Content {
		out = append(out, d.resolve(item))
	}
	return out, true
}

// text reads key as a string people see in tables and terminals (names,
// descriptions): no control characters but those in allow
// (resolute.HasControl). YAML's escapes ("\e[31m") would let them in.
func (o *object) text(key string, dst *string, allow string) {
	if o.str(key, dst) && resolute.HasControl(*dst, allow) {
		o.d.fail(o.d.resolve(o.vals[key]), join(o.path, key), "%s", controlMessage(allow))
	}
}

// textList reads key as a list of such strings (labels).
func (o *object) textList(key string) []string {
	items, ok := o.list(key)
	if !ok {
		return nil
	}
	out := o.d.strings(items, join(o.path, key))
	for i, item := range items {
		if item != nil && item.Kind == yaml.ScalarNode && resolute.HasControl(item.Value, "") {
			o.d.fail(item, index(join(o.path, key), i), "%s", controlMessage(""))
		}
	}
	return out
}

func controlMessage(allow string) string {
	if allow == "" {
		return "must not contain control characters"
	}
	return "must not contain control characters other than newlines and tabs"
}

func (o *object) strList(key string) []string {
	items, ok := o.list(key)
	if !ok {
		return nil
	}
	return o.d.strings(items, join(o.path, key))
}

func (d *decoder) strings(items []*yaml.Node, path string) []string {
	out := make([]string, 0, len(items))
	for i, item := range items {
		if item == nil {
			d.fail(nil, index(path, i), "expected a string, got null")
			continue
		}
		if s, ok := d.scalarString(item, index(path, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// freeForm decodes a value at key whose shape is the user's business (data,
// pod_spec) into plain Go values, requiring a map.
func (o *object) freeForm(key string) map[string]any {
	n := o.take(key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		o.d.fail(n, join(o.path, key), "expected a map, got %s", describe(n))
		return nil
	}
	v, ok := o.d.value(n, join(o.path, key))
	if !ok {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// value decodes any node into plain Go values (map[string]any, []any,
// string, int, float64, bool, nil).
func (d *decoder) value(n *yaml.Node, path string) (any, bool) {
	return d.valueAt(n, path, 0)
}

// maxDepth bounds nesting, which recursive YAML aliases make infinite.
const maxDepth = 64

func (d *decoder) valueAt(n *yaml.Node, path string, depth int) (any, bool) {
	if d.nodes > maxNodes || depth > maxDepth {
		d.fail(n, path, "nested too deeply or too large")
		return nil, false
	}
	n = d.resolve(n)
	if isNull(n) {
		return nil, true
	}
	switch n.Kind {
	case yaml.MappingNode:
		o := d.object(n, path)
		m := make(map[string]any, len(o.order))
		ok := true
		for _, k := range o.order {
			v, vok := d.valueAt(o.vals[k], join(path, k), depth+1)
			ok = ok && vok
			m[k] = v
		}
		return m, ok
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		ok := true
		for i, item := range n.Content {
			v, vok := d.valueAt(item, index(path, i), depth+1)
			ok = ok && vok
			s = append(s, v)
		}
		return s, ok
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			d.fail(n, path, "cannot read value: %v", err)
			return nil, false
		}
		if f, isF := v.(float64); isF && (math.IsNaN(f) || math.IsInf(f, 0)) {
			// JSON cannot carry these; keep the config renderable.
			d.fail(n, path, "expected a finite number, got %s", n.Value)
			return nil, false
		}
		return v, true
	}
	d.fail(n, path, "unsupported YAML value")
	return nil, false
}

// oneOf checks that s is one of allowed, naming them all if not.
func (d *decoder) oneOf(n *yaml.Node, path, s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	d.fail(n, path, "must be one of %s, got %q", orList(allowed), s)
	return false
}

// orList renders [a b c] as "a, b or c".
func orList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	s := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		s += ", " + x
	}
	return s + " or " + xs[len(xs)-1]
}
