package handlers

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// The rule of jsonnames.go applied to raw JSON: one pass over the bytes,
// guided by the table of the type being decoded, notes the keys to rename
// and any field given in both spellings; the keys are then rewritten in a
// copy and encoding/json decodes it. Free-form values are skipped over
// without a look at their keys.

// decodeBody decodes data, one JSON value, into v by the rule: keys
// renamed, then encoding/json, then decodeJSON's checks.
func decodeBody(data []byte, v any) error {
	if n := namesOf(reflect.TypeOf(v)); n != nil && n.renames {
		var err error
		if data, err = renameKeys(data, n); err != nil {
			return err
		}
	}
	return checkDecoded(v, json.Unmarshal(data, v))
}

// renameKeys returns data, one JSON value, with the keys that n's fields
// receive in their other spelling renamed, or a 400 for a field given in
// both. Data it cannot read is returned as it is, for encoding/json to
// say what is wrong with it.
func renameKeys(data []byte, n *jsonNames) ([]byte, error) {
	value, end, err := renameFirst(data, n)
	if err != nil || end < 0 || len(bytes.TrimLeft(data[end:], " \t\r\n")) > 0 {
		return data, err
	}
	return value, nil
}

// renameFirst reads the first JSON value of data, as encoding/json's
// Decoder does, and returns it (from the start of data) with the keys
// that n's fields receive in their other spelling renamed, and where in
// data it ends: -1 when it cannot be read. A field given in both
// spellings is a 400.
func renameFirst(data []byte, n *jsonNames) (value []byte, end int, err error) {
	var buf renamerBuf
	r := renamer{data: data, edits: buf.edits[:0], keys: buf.keys[:0], path: buf.path[:0]}
	ok := r.value(n)
	switch {
	case r.err != nil:
		return nil, -1, r.err
	case !ok:
		return data, -1, nil
	case len(r.edits) == 0:
		return data[:r.i], r.i, nil
	}
	grow := 0
	for _, e := range r.edits {
		grow += len(e.name) + 2 - (e.end - e.start)
	}
	out := make([]byte, 0, r.i+grow)
	last := 0
	for _, e := range r.edits {
		out = append(out, data[last:e.start]...)
		out = append(append(append(out, '"'), e.name...), '"')
		last = e.end
	}
	return append(out, data[last:r.i]...), r.i, nil
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
			if !ok { // encoding/json also takes a field's name in other cases
				f, ok = r.folded(n, start, end)
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

// folded is the field of n whose name matches the key at data[start:end]
// ignoring case, as encoding/json matches keys: the first such field.
func (r *renamer) folded(n *jsonNames, start, end int) (nameField, bool) {
	key := r.data[start+1 : end-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(keyOf(r.data[start:end]))
	}
	for _, name := range n.names {
		if bytes.EqualFold(key, []byte(name)) {
			return n.fields[name], true
		}
	}
	return nameField{}, false
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
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(r.data[r.i:], []byte(lit)) {
			r.i += len(lit)
			return true
		}
	}
	return r.number()
}

// number reads past the number at r.i, by JSON's grammar, so that a body's
// first value ends where encoding/json's Decoder ends it ("12x" is 12).
func (r *renamer) number() bool {
	digits := func() int {
		start := r.i
		for r.i < len(r.data) && '0' <= r.data[r.i] && r.data[r.i] <= '9' {
			r.i++
		}
		return r.i - start
	}
	at := func(c ...byte) bool { return r.i < len(r.data) && bytes.IndexByte(c, r.data[r.i]) >= 0 }
	if at('-') {
		r.i++
	}
	if at('0') {
		r.i++
	} else if digits() == 0 {
		return false
	}
	if at('.') {
		r.i++
		if digits() == 0 {
			return false
		}
	}
	if at('e', 'E') {
		r.i++
		if at('+', '-') {
			r.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
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
