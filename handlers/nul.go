package handlers

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// PostgreSQL stores no NUL character in text, nor \u0000 in jsonb, and
// nothing a person types holds one; so input with one is refused at the
// door, naming where it was, instead of failing deep in a query as a 500.
// refuseNUL checks the path, the query string and form bodies of every
// request; decodeJSON checks every JSON body (nulField). Uploaded files
// are bytes, not text, and may hold NULs.

// errNUL is the answer to a NUL in field.
func errNUL(field string) error {
	return resolute.Errorf(resolute.EInvalid, "%s: must not contain NUL characters", field)
}

// refuseNUL answers 400 to a request with a NUL in its path, its query
// string or its form body, naming the parameter. It parses form bodies
// (after limitBodies bounds them), so handlers find them parsed. (Requests
// to task services are the task origin's, TaskHandler, and theirs to
// judge.)
func (s *Server) refuseNUL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.ContainsRune(r.URL.Path, 0) {
			s.error(w, r, errNUL("path"))
			return
		}
		if strings.Contains(r.URL.RawQuery, "%00") || strings.ContainsRune(r.URL.RawQuery, 0) {
			query, _ := url.ParseQuery(r.URL.RawQuery)
			if field := nulValue(query); field != "" {
				s.error(w, r, errNUL(field))
				return
			}
		}
		if isFormBody(r) {
			if err := parseForm(r); err != nil {
				s.error(w, r, err)
				return
			}
			if field := nulValue(r.PostForm); field != "" {
				s.error(w, r, errNUL(field))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isFormBody says whether r carries a urlencoded form.
func isFormBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return false
	}
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/x-www-form-urlencoded")
}

// nulValue names the first parameter of v (in key order) with a NUL in
// its name or a value, or returns "".
func nulValue(v url.Values) string {
	keys := slices.Sorted(maps.Keys(v))
	for _, k := range keys {
		if strings.ContainsRune(k, 0) {
			return "a parameter's name"
		}
		for _, s := range v[k] {
			if strings.ContainsRune(s, 0) {
				return k
			}
		}
	}
	return ""
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// nulField returns the JSON path (name.items[2].key) of the first string
// in v, a value decoded from JSON, that holds a NUL, or "". Field names
// are their JSON names; raw JSON kept as json.RawMessage is looked into
// too; other []byte (base64 in JSON: files) are bytes and may hold NULs.
func nulField(v any) string {
	return nulIn(reflect.ValueOf(v), "")
}

func nulIn(v reflect.Value, path string) string {
	name := func() string {
		if path == "" {
			return "body"
		}
		return path
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return nulIn(v.Elem(), path)
	case reflect.String:
		if strings.ContainsRune(v.String(), 0) {
			return name()
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" {
				continue
			}
			sub := path // embedded structs' fields are the outer object's
			if !f.Anonymous || key != "" {
				if key == "" {
					key = f.Name
				}
				sub = join(path, key)
			}
			if p := nulIn(v.Field(i), sub); p != "" {
				return p
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return ""
		}
		names := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
		slices.Sort(names) // the same field is named on every call
		for _, k := range names {
			if strings.ContainsRune(k, 0) {
				return name() // a key: name the object that holds it
			}
			if p := nulIn(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), join(path, k)); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == rawMessageType {
			raw := v.Bytes()
			if !bytes.Contains(raw, []byte(`\u0000`)) {
				return ""
			}
			var decoded any
			if json.Unmarshal(raw, &decoded) != nil {
				return ""
			}
			return nulIn(reflect.ValueOf(decoded), path)
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes, not text
		}
		for i := 0; i < v.Len(); i++ {
			if p := nulIn(v.Index(i), path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
