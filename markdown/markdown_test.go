package markdown_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/markdown"
)

func TestToHTML(t *testing.T) {
	tests := map[string]struct {
		src, want string
	}{
		"a paragraph keeps its line break": {"one\ntwo", "<p>one\ntwo</p>\n"},
		"headings":                         {"# Title\n### Sub ##", "<h1>Title</h1>\n<h3>Sub</h3>\n"},
		"emphasis, strong and code":        {"*a* **b** `c*d*`", "<p><em>a</em> <strong>b</strong> <code>c*d*</code></p>\n"},
		"a list":                           {"- one\n- two\n  more\n\nafter", "<ul>\n<li>one</li>\n<li>two\nmore</li>\n</ul>\n<p>after</p>\n"},
		"a numbered list":                  {"1. a\n2. b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		"a fenced block is literal":        {"```\n<b>**x**</b>\n```", "<pre><code>&lt;b&gt;**x**&lt;/b&gt;</code></pre>\n"},
		"a quote":                          {"> said\n> this", "<blockquote>\n<p>said\nthis</p>\n</blockquote>\n"},
		"a rule":                           {"a\n\n---\n\nb", "<p>a</p>\n<hr>\n<p>b</p>\n"},
		"a web link":                       {"[docs](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener">docs</a></p>` + "\n"},
		"a link to this site":              {"[trial](/trials/3)", `<p><a href="/trials/3" rel="nofollow noopener">trial</a></p>` + "\n"},
		"raw HTML is text":                 {`<script>alert(1)</script><img src=x onerror=alert(1)>`, "<p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</p>\n"},
		"a javascript link stays text":     {"[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>\n"},
		"a javascript link in any case":    {"[x](JaVaScRiPt:alert`1`)", "<p>[x](JaVaScRiPt:alert`1`)</p>\n"},
		"a protocol-relative link is text": {"[x](//evil.example)", "<p>[x](//evil.example)</p>\n"},
		"a backslash a browser reads as a slash is text": {`[x](/\evil.example)`, "<p>[x](/\\evil.example)</p>\n"},
		"a fragment":                       {"[top](#notes)", `<p><a href="#notes" rel="nofollow noopener">top</a></p>` + "\n"},
		"quotes cannot leave an attribute": {`[x](https://a.example/"onmouseover="alert(1))`, "<p>[x](https://a.example/&#34;onmouseover=&#34;alert(1))</p>\n"},
		"HTML in a heading is text":        {"# <b>hi</b>", "<h1>&lt;b&gt;hi&lt;/b&gt;</h1>\n"},
		"snake_case stays as it is":        {"learning_rate and batch_size", "<p>learning_rate and batch_size</p>\n"},
		"nothing renders nothing":          {"", ""},
		"a table with a header, escaped cells and inline spans": {"| lr | loss |\n|---|:--:|\n| 0.1 | **0.2** |\n| <b>x</b> |",
			"<table>\n<thead>\n<tr><th>lr</th><th>loss</th></tr>\n</thead>\n<tbody>\n<tr><td>0.1</td><td><strong>0.2</strong></td></tr>\n" +
				"<tr><td>&lt;b&gt;x&lt;/b&gt;</td><td></td></tr>\n</tbody>\n</table>\n"},
		"a table without outer pipes ends at a blank line": {"a | b\n--- | ---\n1 | 2\n\nafter",
			"<table>\n<thead>\n<tr><th>a</th><th>b</th></tr>\n</thead>\n<tbody>\n<tr><td>1</td><td>2</td></tr>\n</tbody>\n</table>\n<p>after</p>\n"},
		"an escaped pipe stays in its cell": {"| a \\| b |\n| --- |\n| c |",
			"<table>\n<thead>\n<tr><th>a | b</th></tr>\n</thead>\n<tbody>\n<tr><td>c</td></tr>\n</tbody>\n</table>\n"},
		"a delimiter of other width is no table": {"| a | b |\n| --- |", "<p>| a | b |\n| --- |</p>\n"},
		"a pipe in a paragraph is text":          {"x | y", "<p>x | y</p>\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, markdown.ToHTML(tc.src)); diff != "" {
				t.Errorf("ToHTML(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestQuotesNestAtMostEightDeep(t *testing.T) {
	// Each level reads its lines again: without a bound, 64 KiB of ">"
	// took seconds to render on every view of the note.
	got := markdown.ToHTML(strings.Repeat(">", 10000) + " deep")
	if n := strings.Count(got, "<blockquote>"); n != 8 {
		t.Errorf("%d nested quotes, want 8", n)
	}
	if !strings.Contains(got, "<p>"+strings.Repeat("&gt;", 10000-8)+" deep</p>") {
		t.Errorf("the ninth level on is not text: %.200s", got)
	}
}

func TestQuotesInALinkAreEscaped(t *testing.T) {
	got := markdown.ToHTML(`[x](https://a.example/"onmouseover="alert)`)
	want := `<p><a href="https://a.example/&#34;onmouseover=&#34;alert" rel="nofollow noopener">x</a></p>` + "\n"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
