package handlers

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/resolute-ml/resolute"
)

// decodeJSONUpload decodes a JSON object from body into v as decodeBody
// does (the API's rule for field names, then encoding/json and
// decodeJSON's checks), except for the value of key field, the JSON name
// of a []byte field of v (matched as encoding/json matches keys, ignoring
// case, or in its other spelling: contextTgz, context_tgz): a base64
// string (how encoding/json writes []byte), which is decoded as it is read
// and handed to sink, never held whole. sink is called at most once and
// must read to the end; the other values may take limit bytes together. A
// body without the streamed field decodes exactly as decodeBody decodes it
// (FuzzDecodeJSONUpload).
func decodeJSONUpload(body io.Reader, v any, field string, limit int64, sink func(io.Reader) error) error {
	s := &jsonScanner{r: bufio.NewReaderSize(body, 64<<10), left: limit}
	c, err := s.space()
	if errors.Is(err, io.EOF) {
		return resolute.Errorf(resolute.EInvalid, "request body is empty; expected JSON")
	} else if err != nil {
		return jsonError(err)
	}
	if c != '{' {
		// Of the other values, encoding/json takes null (as nothing).
		raw, err := s.value(c)
		if err == nil {
			err = s.end()
		}
		if err != nil {
			return err
		}
		if json.Unmarshal(raw, v) != nil {
			return s.syntax("expected a JSON object")
		}
		return checkDecoded(v, nil)
	}
	// The object is written again without the streamed field, every other
	// key and value as it came and in order, for encoding/json to decode as
	// it would the whole body (a later key replacing or merging into an
	// earlier one); each value is checked as it is read, so that a bad one
	// is refused before the context is read.
	obj := []byte{'{'}
	streamed := false
	names := namesOf(reflect.TypeOf(v))
	if names == nil {
		names = &jsonNames{}
	}
	spellings := map[bool]string{} // the field's keys seen: by its name (false) or by its other spelling (true)
	for c, err = s.space(); err == nil && c != '}'; {
		if c != '"' {
			return s.syntax("expected a key")
		}
		rawKey, err := s.value(c)
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return s.syntax("a key is not a valid string")
		}
		if c, err = s.space(); err != nil {
			return jsonError(err)
		} else if c != ':' {
			return s.syntax("expected : after a key")
		}
		if c, err = s.space(); err != nil {
			return jsonError(err)
		}
		named, ok := names.fields[key]
		isField, other := strings.EqualFold(key, field), ok && named.alias && names.names[named.index] == field
		if isField || other {
			spellings[other] = key
			if len(spellings) == 2 {
				return resolute.Errorf(resolute.EInvalid, "%s: given twice, as %q and %q; send one", field, spellings[false], spellings[true])
			}
		}
		if (isField || other) && c == '"' {
			if streamed {
				return resolute.Errorf(resolute.EInvalid, "%s: given twice", field)
			}
			streamed = true
			str := &jsonStringReader{s: s}
			if err := sink(base64.NewDecoder(base64.StdEncoding, str)); err != nil {
				return err
			}
			if !str.done {
				return resolute.Errorf(resolute.EInvalid, "%s: expected base64 after its end", field)
			}
		} else {
			raw, err := s.value(c)
			if err != nil {
				return err
			}
			if !json.Valid(raw) {
				return s.syntax(fmt.Sprintf("the value of %q is not valid JSON", key))
			}
			if len(obj) > 1 {
				obj = append(obj, ',')
			}
			obj = append(append(append(obj, rawKey...), ':'), raw...)
		}
		if c, err = s.space(); err != nil {
			return jsonError(err)
		}
		switch c {
		case ',':
			if c, err = s.space(); err == nil && c == '}' {
				return s.syntax("expected a key after ,")
			}
		case '}':
		default:
			return s.syntax("expected , or } after a value")
		}
	}
	if err != nil {
		return jsonError(err)
	}
	if err := s.end(); err != nil {
		return err
	}
	return decodeBody(append(obj, '}'), v)
}

// jsonScanner reads JSON a byte at a time, counting what it keeps.
type jsonScanner struct {
	r    *bufio.Reader
	off  int64
	left int64 // of what value may keep
}

func (s *jsonScanner) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err == nil {
		s.off++
	} else if errors.Is(err, io.EOF) && s.off > 0 {
		err = io.ErrUnexpectedEOF
	}
	return c, err
}

// space returns the next byte that is not white space.
func (s *jsonScanner) space() (byte, error) {
	for {
		c, err := s.byte()
		if err != nil || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, err
		}
	}
}

// end reads the rest of the body, which may hold only white space.
func (s *jsonScanner) end() error {
	for {
		c, err := s.r.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return jsonError(err)
		}
		s.off++
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return s.syntax("expected nothing after the JSON value")
		}
	}
}

func (s *jsonScanner) syntax(msg string) error {
	return resolute.Errorf(resolute.EInvalid, "malformed JSON at byte %d: %s", s.off, msg)
}

// value reads the JSON value that starts with c, as it is written; the
// caller checks it.
func (s *jsonScanner) value(c byte) (json.RawMessage, error) {
	raw := []byte{c}
	keep := func(c byte) error {
		if s.left--; s.left < 0 {
			return resolute.Errorf(resolute.ETooLarge, "the request's fields besides the context are larger than the limit")
		}
		raw = append(raw, c)
		return nil
	}
	depth, inString := 0, c == '"'
	switch c {
	case '{', '[':
		depth = 1
	case '"':
	default: // a number, true, false or null: up to the next delimiter
		for {
			next, err := s.r.Peek(1)
			if err != nil || next[0] == ',' || next[0] == '}' || next[0] == ']' || next[0] == ' ' ||
				next[0] == '\t' || next[0] == '\n' || next[0] == '\r' {
				return raw, nil
			}
			b, _ := s.byte()
			if err := keep(b); err != nil {
				return nil, err
			}
		}
	}
	for inString || depth > 0 {
		b, err := s.byte()
		if err != nil {
			return nil, jsonError(err)
		}
		if err := keep(b); err != nil {
			return nil, err
		}
		switch {
		case inString && b == '\\':
			if b, err = s.byte(); err != nil {
				return nil, jsonError(err)
			}
			if err := keep(b); err != nil {
				return nil, err
			}
		case inString && b == '"':
			inString = false
		case inString:
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		}
	}
	return raw, nil
}

// jsonStringReader reads the contents of a JSON string, unescaped, up to
// its closing quote; the opening one has been read.
type jsonStringReader struct {
	s    *jsonScanner
	done bool
	rest []byte // of an escaped rune that did not fit
}

func (j *jsonStringReader) Read(p []byte) (int, error) {
	n := copy(p, j.rest)
	j.rest = j.rest[n:]
	for n < len(p) && !j.done {
		if n > 0 && j.s.r.Buffered() == 0 {
			break // hand over what there is rather than wait
		}
		c, err := j.s.byte()
		if err != nil {
			return n, jsonError(err)
		}
		switch {
		case c == '"':
			j.done = true
		case c < 0x20:
			return n, j.s.syntax("a control character in a string")
		case c != '\\':
			p[n] = c
			n++
		default:
			r, err := j.escape()
			if err != nil {
				return n, err
			}
			var buf [utf8.UTFMax]byte
			size := utf8.EncodeRune(buf[:], r)
			k := copy(p[n:], buf[:size])
			j.rest = append(j.rest[:0], buf[k:size]...)
			n += k
		}
	}
	if n == 0 && j.done {
		return 0, io.EOF
	}
	return n, nil
}

// escape reads the rest of an escape sequence.
func (j *jsonStringReader) escape() (rune, error) {
	c, err := j.s.byte()
	if err != nil {
		return 0, jsonError(err)
	}
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		var hex [4]byte
		for i := range hex {
			if hex[i], err = j.s.byte(); err != nil {
				return 0, jsonError(err)
			}
		}
		v, err := strconv.ParseUint(string(hex[:]), 16, 16)
		if err != nil {
			return 0, j.s.syntax(fmt.Sprintf("bad escape \\u%s", hex[:]))
		}
		return rune(v), nil
	}
	return 0, j.s.syntax(fmt.Sprintf("bad escape \\%c", c))
}
