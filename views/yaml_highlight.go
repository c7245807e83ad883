package views

import (
	"context"
	"io"
	"regexp"
	"strings"

	"github.com/a-h/templ"
)

// YAMLLine is one line of a config, cut into the parts the config views
// colour: the indent and list dashes, a key, a value and a comment. Unused,
// when set, says why the line's key has no effect.
type YAMLLine struct {
	Lead      string // indent and "- "
	Key       string // without its colon; "" for none
	Value     string
	ValueKind string // "str", "num", "lit" (true, false, null) or "" for none
	Comment   string // from its "#"
	Unused    string
	// UnusedKey says the line's own key is the unused one (its nested
	// lines are Unused too); the line says why in words.
	UnusedKey bool
}

var (
	yamlKey = regexp.MustCompile(`^("[^"]*"|'[^']*'|[^\s#'"{\[][^:#]*?):(\s|$)`)
	yamlNum = regexp.MustCompile(`^[-+]?(\.inf|\.Inf|\.nan|(\d[\d_]*)?\.?\d+([eE][-+]?\d+)?|0x[0-9a-fA-F]+)$`)
)

// HighlightYAML cuts src into lines for the config views. unused names keys
// by their path (section.key) that have no effect, with why; a key's
// nested lines are marked with it.
func HighlightYAML(src string, unused map[string]string) []YAMLLine {
	src = strings.TrimRight(src, "\n")
	var out []YAMLLine
	type open struct {
		indent int
		key    string
	}
	var path []open
	markIndent, mark := -1, ""
	blockIndent := -1 // the indent of a key whose value is a block scalar (| or >)
	for _, raw := range strings.Split(src, "\n") {
		l := YAMLLine{}
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if mark != "" && (body == "" || indent > markIndent) {
			l.Unused = mark
		} else {
			mark, markIndent = "", -1
		}
		if blockIndent >= 0 && (body == "" || indent > blockIndent) {
			l.Lead, l.Value, l.ValueKind = raw[:indent], body, "str"
			out = append(out, l)
			continue
		}
		blockIndent = -1
		if strings.HasPrefix(body, "#") || body == "" {
			l.Lead, l.Comment = raw[:indent], body
			out = append(out, l)
			continue
		}
		for strings.HasPrefix(body, "- ") || body == "-" {
			body = strings.TrimPrefix(strings.TrimPrefix(body, "-"), " ")
		}
		l.Lead = raw[:len(raw)-len(body)]
		if m := yamlKey.FindStringSubmatch(body); m != nil {
			l.Key = m[1]
			body = strings.TrimLeft(body[len(m[1])+1:], " ")
			for len(path) > 0 && path[len(path)-1].indent >= indent {
				path = path[:len(path)-1]
			}
			path = append(path, open{indent, strings.Trim(l.Key, `"'`)})
			var keys []string
			for _, p := range path {
				keys = append(keys, p.key)
			}
			if why, ok := unused[strings.Join(keys, ".")]; ok && mark == "" {
				l.Unused, l.UnusedKey, mark, markIndent = why, true, why, indent
			}
		}
		l.Value, l.Comment = splitComment(body)
		l.ValueKind = valueKind(l.Value)
		if strings.HasPrefix(l.Value, "|") || strings.HasPrefix(l.Value, ">") {
			blockIndent = indent
		}
		out = append(out, l)
	}
	return out
}

// splitComment cuts a trailing " #" comment off a value, outside quotes.
func splitComment(s string) (value, comment string) {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimRight(s[:i], " "), s[i:]
		}
	}
	return s, ""
}

// valueKind says how a scalar reads: a number, a literal or a string.
func valueKind(v string) string {
	switch {
	case v == "":
		return ""
	case yamlNum.MatchString(v):
		return "num"
	case v == "true" || v == "false" || v == "null" || v == "~" || v == "True" || v == "False":
		return "lit"
	case v == "|" || v == ">" || v == "|-" || v == ">-" || v == "{}" || v == "[]":
		return "lit"
	}
	return "str"
}

// yamlView is a config, highlighted, at its full height: keys, strings,
// numbers, literals and comments as spans; lines whose key has no effect
// in a span of class unused, with why on hover and, on the key's line, in
// words. Written out here, as templ would put spaces between the spans.
func yamlView(lines []YAMLLine) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		var b strings.Builder
		b.WriteString(`<pre class="yaml"><code>`)
		span := func(class, text string) {
			b.WriteString(`<span class="` + class + `">` + templ.EscapeString(text) + `</span>`)
		}
		for _, l := range lines {
			if l.Unused != "" {
				b.WriteString(`<span class="unused" title="` + templ.EscapeString(l.Unused) + `">`)
			}
			b.WriteString(templ.EscapeString(l.Lead))
			if l.Key != "" {
				span("yk", l.Key)
				b.WriteString(":")
				if l.Value != "" {
					b.WriteString(" ")
				}
			}
			if l.ValueKind != "" {
				span("y"+l.ValueKind, l.Value)
			}
			if l.Comment != "" {
				if l.Key != "" || l.Value != "" {
					b.WriteString(" ")
				}
				span("yc", l.Comment)
			}
			if l.UnusedKey {
				span("yc note", "  # "+l.Unused)
			}
			if l.Unused != "" {
				b.WriteString("</span>")
			}
			b.WriteString("\n")
		}
		b.WriteString("</code></pre>")
		_, err := io.WriteString(w, b.String())
		return err
	})
}
