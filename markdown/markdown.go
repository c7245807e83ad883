// Package markdown renders the small subset of Markdown that notes use
// (headings, paragraphs, lists, quotes, code, tables, emphasis, links) as safe
// HTML. Every character of the source is escaped: raw HTML in a note shows
// as text, and links go only to http, https, mailto or paths of this site.
// It must not grow into a full CommonMark implementation; notes need no more.
package markdown

import (
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
)

// maxQuoteDepth bounds nested quotes: each level reads its lines again, so
// a note of 64 KiB of ">" would otherwise take seconds to render on every
// view. Deeper ">" stay text.
const maxQuoteDepth = 8

// ToHTML renders src as HTML that is safe to put in a page.
func ToHTML(src string) string {
	return render(src, 0)
}

// render renders src inside depth quotes.
func render(src string, depth int) string {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var b strings.Builder
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, "\n")) + "</p>\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "```"):
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
		case heading.MatchString(trimmed):
			flush()
			m := heading.FindStringSubmatch(trimmed)
			n := strconv.Itoa(len(m[1]))
			b.WriteString("<h" + n + ">" + inline(strings.TrimRight(m[2], "# ")) + "</h" + n + ">\n")
		case rule.MatchString(trimmed):
			flush()
			b.WriteString("<hr>\n")
		case strings.HasPrefix(trimmed, ">") && depth < maxQuoteDepth:
			flush()
			var quote []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				quote = append(quote, strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">"), " "))
			}
			i--
			b.WriteString("<blockquote>\n" + render(strings.Join(quote, "\n"), depth+1) + "</blockquote>\n")
		case bullet.MatchString(line) || numbered.MatchString(line):
			flush()
			tag, item := "ul", bullet
			if !bullet.MatchString(line) {
				tag, item = "ol", numbered
			}
			b.WriteString("<" + tag + ">\n")
			for ; i < len(lines) && item.MatchString(lines[i]); i++ {
				text := item.ReplaceAllString(lines[i], "")
				// Lines indented under an item continue it.
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && !item.MatchString(lines[i+1]) && strings.TrimSpace(lines[i+1]) != "" {
					i++
					text += "\n" + strings.TrimSpace(lines[i])
				}
				b.WriteString("<li>" + inline(text) + "</li>\n")
			}
			i--
			b.WriteString("</" + tag + ">\n")
		case isTableStart(lines, i):
			flush()
			i = table(&b, lines, i) - 1
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return b.String()
}

// isTableStart says whether a table starts at lines[i]: a row of cells
// with a '|', then a delimiter row (| --- | :-: |) of as many cells, as in
// GitHub's Markdown.
func isTableStart(lines []string, i int) bool {
	if i+1 >= len(lines) || !strings.Contains(lines[i], "|") {
		return false
	}
	delim := strings.TrimSpace(lines[i+1])
	if !strings.Contains(delim, "|") || !tableDelim.MatchString(delim) {
		return false
	}
	return len(cells(lines[i])) == len(cells(delim))
}

// table writes the table that starts at lines[i] and returns the index of
// the first line after it: its body rows run to a blank line or a line
// without a '|'. A short row is padded and a long one cut to the header's
// cells. Alignment is not kept: the page's style aligns cells.
func table(b *strings.Builder, lines []string, i int) int {
	head := cells(lines[i])
	b.WriteString("<table>\n<thead>\n<tr>")
	for _, c := range head {
		b.WriteString("<th>" + inline(c) + "</th>")
	}
	b.WriteString("</tr>\n</thead>\n<tbody>\n")
	for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.Contains(lines[i], "|"); i++ {
		row := cells(lines[i])
		b.WriteString("<tr>")
		for n := range head {
			c := ""
			if n < len(row) {
				c = row[n]
			}
			b.WriteString("<td>" + inline(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return i
}

// cells splits a table row on its '|'s, leading and trailing ones
// optional; "\|" is a '|' inside a cell.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var out []string
	var cell strings.Builder
	for j := 0; j < len(row); j++ {
		switch {
		case row[j] == '\\' && j+1 < len(row) && row[j+1] == '|':
			cell.WriteByte('|')
			j++
		case row[j] == '|':
			out = append(out, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(row[j])
		}
	}
	return append(out, strings.TrimSpace(cell.String()))
}

var (
	tableDelim = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	rule       = regexp.MustCompile(`^(-{3,}|\*{3,}|_{3,})$`)
	bullet     = regexp.MustCompile(`^\s{0,3}[-*+]\s+`)
	numbered   = regexp.MustCompile(`^\s{0,3}\d{1,9}[.)]\s+`)
	// A span is code, a link, strong or emphasis; the first that starts
	// earliest wins, and code spans take their text literally.
	span = regexp.MustCompile("`([^`]+)`" + `|\[([^\]]+)\]\(([^()\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b`)
)

// inline renders emphasis, code and links inside a block; the rest is
// escaped text, and line breaks inside a paragraph stay line breaks.
func inline(s string) string {
	var b strings.Builder
	for {
		loc := span.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(html.EscapeString(s))
			return b.String()
		}
		b.WriteString(html.EscapeString(s[:loc[0]]))
		part := func(n int) string { return s[loc[2*n]:loc[2*n+1]] }
		switch {
		case loc[2] >= 0:
			b.WriteString("<code>" + html.EscapeString(part(1)) + "</code>")
		case loc[4] >= 0:
			text, href := part(2), part(3)
			if safeURL(href) {
				b.WriteString(`<a href="` + html.EscapeString(href) + `" rel="nofollow noopener">` + inline(text) + "</a>")
			} else {
				b.WriteString(html.EscapeString(s[loc[0]:loc[1]]))
			}
		case loc[8] >= 0:
			b.WriteString("<strong>" + inline(part(4)) + "</strong>")
		case loc[10] >= 0:
			b.WriteString("<strong>" + inline(part(5)) + "</strong>")
		case loc[12] >= 0:
			b.WriteString("<em>" + inline(part(6)) + "</em>")
		case loc[14] >= 0:
			b.WriteString("<em>" + inline(part(7)) + "</em>")
		}
		s = s[loc[1]:]
	}
}

// safeURL allows web and mail links, this site's own paths and fragments;
// anything else (javascript:, data:, vbscript:..., and paths a browser
// reads as another host, such as /\evil.example) stays text.
func safeURL(u string) bool {
	lower := strings.ToLower(u)
	for _, p := range []string{"https://", "http://", "mailto:"} {
		if strings.HasPrefix(lower, p) {
			return !resolute.HasControl(u, "")
		}
	}
	return resolute.LocalPath(u) || (strings.HasPrefix(u, "#") && !resolute.HasControl(u, ""))
}
