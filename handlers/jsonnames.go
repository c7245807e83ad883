package handlers

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/resolute-ml/resolute"
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

// decodeBody decodes data, one JSON value, into v by the rule: keys
// renamed, then encoding/json, then decodeJSON's checks.
func decodeBody(data []byte, v any) error {
	data, err := renameKeys(data, namesOf(reflect.TypeOf(v)))
	if err != nil {
		return err
	}
	return checkDecoded(v, json.Unmarshal(data, v))
}

// renameKeys returns data with the keys that n's fields receive in their
// other spelling renamed, or a 400 for a field given in both. Data it
// cannot read is returned as it is, for encoding/json to say what is
// wrong with it.
func renameKeys(data []byte, n *jsonNames) ([]byte, error) {
	if n == nil || !n.renames {
		return data, nil
	}
	var buf renamerBuf
	r := renamer{data: data, edits: buf.edits[:0], keys: buf.keys[:0], path: buf.path[:0]}
	ok := r.value(n)
	if ok {
		r.space()
		ok = r.i == len(data)
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case !ok || len(r.edits) == 0:
		return data, nil
	}
	grow := 0
	for _, e := range r.edits {
		grow += len(e.name) + 2 - (e.end - e.start)
	}
	out := make([]byte, 0, len(data)+grow)
	last := 0
	for _, e := range r.edits {
		out = append(out, data[last:e.start]...)
		out = append(append(append(out, '"'), e.name...), '"')
		last = e.end
	}
	return append(out, data[last:]...), nil
}

// renamer reads JSON as the table of its type says, noting the keys to
// rename.
type renamer struct {
	data  []byte
	i     int
	edits []keyEdit  // in order
	keys  []seenKey  // of the objects being read, innermost last
	path  []pathStep // to the value being read
	err   error      // a field given in both spellings
}

// renamerBuf holds a renamer's first few notes, without allocating.
type renamerBuf struct {
	edits [8]keyEdit
	keys  [16]seenKey
	path  [8]pathStep
}

// keyEdit renames the key written at data[start:end], quotes included.
type keyEdit struct {
	start, end int
	name       string
}

// seenKey is a key of an object being read and the field it went to.
type seenKey struct {
	start, end int // quotes included
	field      int // -1: none by name (encoding/json may match it ignoring case)
	alias      bool
}

// pathStep is a step of the path to a value: a field (name), an element
// (index, name ""), or a map's value (key at data[start:end]).
type pathStep struct {
	name       string
	index      int
	start, end int
}

func (r *renamer) space() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// value reads the value at r.i, of a type whose table is n; false when
// it is not JSON that can be read, or a field came twice (r.err).
func (r *renamer) value(n *jsonNames) bool {
	r.space()
	if r.i >= len(r.data) {
		return false
	}
	c := r.data[r.i]
	switch {
	case n == nil || !n.renames:
		return r.skip()
	case n.kind == reflect.Struct && c == '{':
		return r.object(n)
	case n.kind == reflect.Map && c == '{':
		return r.object(n)
	case n.kind == reflect.Slice && c == '[':
		return r.array(n.elem)
	}
	return r.skip() // not what the type takes: encoding/json says so
}

// object reads an object: a struct's (n.kind Struct) or a map's.
func (r *renamer) object(n *jsonNames) bool {
	r.i++ // {
	mark := len(r.keys)
	aliases := false
	r.space()
	if r.i < len(r.data) && r.data[r.i] == '}' {
		r.i++
		return true
	}
	for {
		r.space()
		start := r.i
		if r.i >= len(r.data) || r.data[r.i] != '"' || !r.skipString() {
			return false
		}
		end := r.i
		step := pathStep{start: start, end: end}
		var child *jsonNames
		if n.kind == reflect.Map {
			child = n.elem
		} else {
			var f nameField
			var ok bool
			if key := r.data[start+1 : end-1]; bytes.IndexByte(key, '\\') < 0 {
				f, ok = n.fields[string(key)] // no copy of the key
			} else {
				f, ok = n.fields[keyOf(r.data[start:end])]
			}
			seen := seenKey{start: start, end: end, field: -1}
			if ok {
				seen.field, seen.alias, child = f.index, f.alias, f.names
				step = pathStep{name: n.names[f.index]}
				if f.alias {
					aliases = true
					r.edits = append(r.edits, keyEdit{start: start, end: end, name: n.names[f.index]})
				}
			}
			r.keys = append(r.keys, seen)
		}
		r.space()
		if r.i >= len(r.data) || r.data[r.i] != ':' {
			return false
		}
		r.i++
		r.path = append(r.path, step)
		if !r.value(child) {
			return false
		}
		r.path = r.path[:len(r.path)-1]
		r.space()
		if r.i >= len(r.data) {
			return false
		}
		r.i++
		if c := r.data[r.i-1]; c == '}' {
			break
		} else if c != ',' {
			return false
		}
	}
	if aliases {
		r.err = r.bothSpellings(n, r.keys[mark:])
	}
	r.keys = r.keys[:mark]
	return r.err == nil
}

// keyOf is the text of a key written at raw, quotes included.
func keyOf(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// bothSpellings is a 400 when a field of n came in an object both under
// its other spelling and under its name (or another key that encoding/json
// matches to it), else nil.
func (r *renamer) bothSpellings(n *jsonNames, keys []seenKey) error {
	for _, a := range keys {
		if !a.alias {
			continue
		}
		name := n.names[a.field]
		for _, k := range keys {
			if k.field != a.field && (k.field != -1 || !r.foldsTo(k, name)) || r.sameKey(k, a) {
				continue
			}
			return resolute.Errorf(resolute.EInvalid, "%s: given twice, as %q and %q; send one",
				r.where(name), keyOf(r.data[k.start:k.end]), keyOf(r.data[a.start:a.end]))
		}
	}
	return nil
}

// sameKey says whether keys a and b are the same text.
func (r *renamer) sameKey(a, b seenKey) bool {
	ra, rb := r.data[a.start:a.end], r.data[b.start:b.end]
	if bytes.Equal(ra, rb) {
		return true
	}
	if bytes.IndexByte(ra, '\\') < 0 && bytes.IndexByte(rb, '\\') < 0 {
		return false
	}
	return keyOf(ra) == keyOf(rb)
}

// foldsTo says whether encoding/json matches key k to name ignoring case.
func (r *renamer) foldsTo(k seenKey, name string) bool {
	raw := r.data[k.start:k.end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return bytes.EqualFold(raw[1:len(raw)-1], []byte(name))
	}
	return strings.EqualFold(keyOf(raw), name)
}

// where is the path of field name of the object being read, as nulField
// writes paths.
func (r *renamer) where(name string) string {
	path := ""
	for _, s := range r.path {
		switch {
		case s.name != "":
			path = join(path, s.name)
		case s.end > s.start:
			path = join(path, keyOf(r.data[s.start:s.end]))
		default:
			path += "[" + strconv.Itoa(s.index) + "]"
		}
	}
	return join(path, name)
}

// array reads a list whose elements' table is elem.
func (r *renamer) array(elem *jsonNames) bool {
	r.i++ // [
	r.space()
	if r.i < len(r.data) && r.data[r.i] == ']' {
		r.i++
		return true
	}
	for index := 0; ; index++ {
		r.path = append(r.path, pathStep{index: index})
		if !r.value(elem) {
			return false
		}
		r.path = r.path[:len(r.path)-1]
		r.space()
		if r.i >= len(r.data) {
			return false
		}
		r.i++
		if c := r.data[r.i-1]; c == ']' {
			return true
		} else if c != ',' {
			return false
		}
	}
}

// skip reads past a value whose keys stay as they are.
func (r *renamer) skip() bool {
	switch r.data[r.i] {
	case '"':
		return r.skipString()
	case '{', '[':
		depth := 0
		for r.i < len(r.data) {
			switch r.data[r.i] {
			case '"':
				if !r.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					r.i++
					return true
				}
			}
			r.i++
		}
		return false
	}
	start := r.i // a number, true, false or null
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return r.i > start
		}
		r.i++
	}
	return r.i > start
}

// skipString reads past the string that starts at r.i.
func (r *renamer) skipString() bool {
	for r.i++; r.i < len(r.data); r.i++ {
		switch r.data[r.i] {
		case '\\':
			r.i++
		case '"':
			r.i++
			return true
		}
	}
	return false
}
