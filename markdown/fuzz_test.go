package markdown_test

import (
	"io"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/resolute-ml/resolute/markdown"
)

// emitted are the tags ToHTML writes and the attributes each may carry.
var emitted = map[string][]string{
	"p": nil, "h1": nil, "h2": nil, "h3": nil, "h4": nil, "h5": nil, "h6": nil, "pre": nil, "code": nil,
	"hr": nil, "blockquote": nil, "ul": nil, "ol": nil, "li": nil, "strong": nil, "em": nil,
	"table": nil, "thead": nil, "tbody": nil, "tr": nil, "th": nil, "td": nil,
	"a": {"href", "rel"},
}

// FuzzToHTML: no input panics the renderer, and what it writes, read by an
// HTML parser as a browser reads it, holds only the tags and attributes
// the renderer emits, with links only to http(s), mailto or this site.
func FuzzToHTML(f *testing.F) {
	for _, seed := range []string{
		"# Title\n\nsome *text* and **bold** `code` [docs](https://example.com/a?b=1&c=2)",
		"- one\n- two\n  more\n\n1. a\n2. b\n\n> quote\n> more\n\n---\n\n```\n<b>x</b>\n```",
		`<script>alert(1)</script><img src=x onerror=alert(1)>`,
		"[x](javascript:alert(1))", "[x](JaVaScRiPt:alert`1`)", "[x](//evil.example)", `[x](/\evil.example)`,
		`[x](https://a.example/"onmouseover="alert(1))`, "[x](/trials/3)", "[x](#top)", "[x](mailto:a@b.example)",
		"[x](data:text/html,<script>alert(1)</script>)", "[*a*](/x) _b_ __c__", "[x](/&#9;/evil.example)",
		"[x](/%09/evil)", "[x](\x01//evil)", "[x](https:\\\\evil)", "[[x](/a)](/b)", "> > > [x](/y)",
		"| lr | loss |\n|---|:--:|\n| 0.1 | **0.2** |\n| [x](javascript:1) |", "a \\| b | c\n--- | ---\n<b>|</b>",
		"[x](vbscript:msgbox)", "[x](/a\x7f)", "**[x](https://e.example)**", "<!-- c --> <!DOCTYPE html>",
	} {
		f.Add(seed)
	}
	base, _ := url.Parse("http://master.example:8080/experiments/7")
	f.Fuzz(func(t *testing.T, src string) {
		out := markdown.ToHTML(src)
		z := html.NewTokenizer(strings.NewReader(out))
		for {
			tt := z.Next()
			switch tt {
			case html.ErrorToken:
				if z.Err() != io.EOF {
					t.Fatalf("ToHTML(%q) = %q: %v", src, out, z.Err())
				}
				return
			case html.CommentToken, html.DoctypeToken:
				t.Fatalf("ToHTML(%q) = %q holds a %v", src, out, tt)
			case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
				tok := z.Token()
				allowed, ok := emitted[tok.Data]
				if !ok {
					t.Fatalf("ToHTML(%q) = %q holds <%s>", src, out, tok.Data)
				}
				for _, a := range tok.Attr {
					if !contains(allowed, a.Key) {
						t.Fatalf("ToHTML(%q) = %q: <%s %s>", src, out, tok.Data, a.Key)
					}
					if a.Key == "href" && !safeLink(base, a.Val) {
						t.Fatalf("ToHTML(%q) = %q links to %q", src, out, a.Val)
					}
					if a.Key == "rel" && a.Val != "nofollow noopener" {
						t.Fatalf("ToHTML(%q) = %q: rel %q", src, out, a.Val)
					}
				}
			}
		}
	})
}

// escapeStrayPercents escapes each % that starts no escape: browsers
// keep one as it is, net/url refuses it.
func escapeStrayPercents(s string) string {
	hex := func(i int) bool { return i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(hex(i+1) && hex(i+2)) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// safeLink says whether href, resolved as a browser resolves a link (tabs
// and newlines dropped, ends trimmed, a backslash a slash), goes to
// http(s) anywhere, to mailto, or to this site.
func safeLink(base *url.URL, href string) bool {
	href = strings.TrimFunc(href, func(r rune) bool { return r <= 0x20 })
	href = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(href)
	if i := strings.IndexAny(href, "?#"); i >= 0 {
		href = strings.ReplaceAll(href[:i], `\`, "/") + href[i:]
	} else {
		href = strings.ReplaceAll(href, `\`, "/")
	}
	lower := strings.ToLower(href)
	for _, p := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(lower, p) {
			return true // web and mail links go anywhere, even where net/url cannot read the host ("http://^")
		}
	}
	u, err := url.Parse(escapeStrayPercents(href))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
		return true
	case "":
		r := base.ResolveReference(u)
		return r.Scheme == base.Scheme && r.Host == base.Host && r.User == nil
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
