package handlers

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// The API's one rule for the names of fields in JSON bodies. Determined's
// API is protobuf JSON behind grpc-gateway, which takes a field by its
// lowerCamelCase JSON name or by its snake_case proto name; Determined's
// own clients send camelCase (trialRunId, avgMetrics), Resolute's structs
// name some fields one way and some the other. So every body decoded for
// /api/v1 (decodeJSON, decodeJSONUpload, decodeBody) first has each key
// of an object that a struct field receives renamed to the field's JSON
// name when the key is the field's name in the other spelling; then
// encoding/json decodes it as always (a key it already matched, exactly
// or ignoring case, is never renamed, and unknown keys stay ignored).
// Keys of maps and of free-form values (metrics, hyperparameters,
// metadata, configs: json.RawMessage, any, map keys) are user data and
// are never touched. A field given in both spellings in one object is a
// 400 naming it.

// jsonNames is what the rule knows of a type decoded from JSON; nil is a
// free-form value, whose keys are never touched.
type jsonNames struct {
	kind   reflect.Kind         // Struct, Slice (lists and arrays) or Map
	fields map[string]nameField // Struct: a key as it may come → its field
	names  []string             // Struct: the fields' JSON names
	elem   *jsonNames           // Slice: of elements; Map: of values
	// renames says whether a key in a value of this type may be renamed:
	// a field here or below has another spelling. Values of other types
	// are decoded without a look.
	renames bool
}

// nameField is a struct field as a key names it.
type nameField struct {
	index int        // into names
	alias bool       // the key is the field's other spelling: renamed to names[index]
	names *jsonNames // of the field's value
}

var (
	namesMu    sync.Mutex
	namesCache sync.Map // reflect.Type → *jsonNames
)

// namesOf returns the rule's table of t, made once per type.
func namesOf(t reflect.Type) *jsonNames {
	if n, ok := namesCache.Load(t); ok {
		return n.(*jsonNames)
	}
	namesMu.Lock()
	defer namesMu.Unlock()
	if n, ok := namesCache.Load(t); ok {
		return n.(*jsonNames)
	}
	b := namesBuilder{seen: map[reflect.Type]*jsonNames{}}
	n := b.build(t)
	// renames spreads from fields with two spellings to every value that
	// can hold one, through recursive types too.
	for changed := true; changed; {
		changed = false
		for _, m := range b.all {
			if m.renames {
				continue
			}
			below := m.elem != nil && m.elem.renames
			for _, f := range m.fields {
				below = below || f.alias || (f.names != nil && f.names.renames)
			}
			if below {
				m.renames, changed = true, true
			}
		}
	}
	namesCache.Store(t, n)
	return n
}

type namesBuilder struct {
	seen map[reflect.Type]*jsonNames
	all  []*jsonNames
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (b *namesBuilder) build(t reflect.Type) *jsonNames {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := b.seen[t]; ok {
		return n
	}
	// A type that decodes itself reads its keys its own way.
	if reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	var n *jsonNames
	switch t.Kind() {
	case reflect.Struct:
		n = &jsonNames{kind: reflect.Struct, fields: map[string]nameField{}}
		b.seen[t] = n
		for _, f := range structFields(t) {
			nf := nameField{index: len(n.names)}
			if !f.quoted { // a ",string" field's value is a string
				nf.names = b.build(f.typ)
			}
			n.names = append(n.names, f.name)
			n.fields[f.name] = nf
		}
		for i, name := range n.names {
			for _, other := range []string{lowerCamel(name), snake(name)} {
				if _, taken := n.fields[other]; taken || foldsTo(other, n.names) {
					continue // encoding/json already gives that key to a field
				}
				n.fields[other] = nameField{index: i, alias: true, names: n.fields[name].names}
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // bytes: base64
		}
		n = &jsonNames{kind: reflect.Slice}
		b.seen[t] = n
		n.elem = b.build(t.Elem())
	case reflect.Map:
		n = &jsonNames{kind: reflect.Map}
		b.seen[t] = n
		n.elem = b.build(t.Elem())
	default:
		return nil // numbers, strings, bools, any: nothing to rename
	}
	if n.kind != reflect.Struct && n.elem == nil {
		delete(b.seen, t) // of free-form values: free-form (no cycle passed here)
		return nil
	}
	b.all = append(b.all, n)
	return n
}

// foldsTo says whether encoding/json matches key to one of names ignoring
// case.
func foldsTo(key string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// jsonField is a field of a struct as encoding/json decodes it.
type jsonField struct {
	name   string
	typ    reflect.Type
	quoted bool // ",string"
	depth  int
	tagged bool
}

// structFields lists the fields encoding/json decodes into a value of t,
// embedded structs' promoted fields included, by its rules: of fields of
// one name the shallowest wins, then a tagged one; a tie hides them all.
func structFields(t reflect.Type) []jsonField {
	var all []jsonField
	var walk func(t reflect.Type, depth int, visited map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visited map[reflect.Type]bool) {
		if visited[t] {
			return
		}
		visited[t] = true
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1, visited)
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			f := jsonField{name: name, typ: sf.Type, depth: depth, tagged: name != ""}
			if name == "" {
				f.name = sf.Name
			}
			if opts != "" && strings.Contains(","+opts+",", ",string,") {
				switch kindOf(sf.Type) {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
					reflect.Float32, reflect.Float64, reflect.String:
					f.quoted = true
				}
			}
			all = append(all, f)
		}
		delete(visited, t)
	}
	walk(t, 0, map[reflect.Type]bool{})
	var out []jsonField
	for i, f := range all {
		winner, tie := true, false
		for j, g := range all {
			if i == j || g.name != f.name {
				continue
			}
			switch {
			case g.depth < f.depth || (g.depth == f.depth && g.tagged && !f.tagged):
				winner = false
			case g.depth == f.depth && g.tagged == f.tagged:
				tie = true
			}
		}
		if winner && !tie {
			out = append(out, f)
		}
	}
	return out
}

func kindOf(t reflect.Type) reflect.Kind {
	if t.Kind() == reflect.Pointer {
		return t.Elem().Kind()
	}
	return t.Kind()
}

// lowerCamel is a snake_case name as protobuf spells it in JSON:
// trial_run_id → trialRunId.
func lowerCamel(name string) string {
	if !strings.Contains(name, "_") {
		return name
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			up = true
			continue
		case up && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// snake is a lowerCamelCase name as its proto field would be spelled:
// trialRunId → trial_run_id.
func snake(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
