package client

import (
	"regexp"
	"strings"
)

// Ignore is the patterns of a .detignore file: gitignore's syntax, matched
// against slash-separated paths relative to the context directory.
//
//   - blank lines and lines starting with # are skipped (\# is a literal #);
//   - a pattern starting with ! brings back what an earlier one left out;
//   - a pattern ending with / matches directories only;
//   - a pattern with a / at its start or middle is anchored at the context
//     directory, otherwise it matches a name at any depth;
//   - * and ? match within one path segment, [...] is a character class,
//     and ** matches any number of segments.
//
// As with git, a file inside a left-out directory cannot be brought back.
type Ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ParseIgnore reads the text of a .detignore file.
func ParseIgnore(text string) *Ignore {
	ig := &Ignore{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		// Trailing spaces are not part of a pattern unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		expr := globRegexp(line)
		if anchored || strings.HasPrefix(line, "**") {
			expr = "^" + expr + "$"
		} else {
			expr = "(^|/)" + expr + "$"
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			// An odd pattern matches itself literally rather than failing
			// the whole upload.
			re = regexp.MustCompile("(^|/)" + regexp.QuoteMeta(line) + "$")
		}
		r.re = re
		ig.rules = append(ig.rules, r)
	}
	return ig
}

// Match reports whether rel (slash-separated, relative to the context
// directory) is left out; isDir says whether it is a directory. The last
// pattern that matches decides.
func (ig *Ignore) Match(rel string, isDir bool) bool {
	if ig == nil {
		return false
	}
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if r.re.MatchString(rel) {
			ignored = !r.negate
		}
	}
	return ignored
}

// globRegexp turns one gitignore glob into a regular expression without
// anchors.
func globRegexp(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '*' && strings.HasPrefix(glob[i:], "**"):
			rest := glob[i+2:]
			atStart := i == 0 || glob[i-1] == '/'
			switch {
			case atStart && strings.HasPrefix(rest, "/"):
				// "**/" : any number of leading directories, none included.
				b.WriteString("(.*/)?")
				i += 2
			case atStart && rest == "":
				// trailing "/**" : everything inside.
				b.WriteString(".*")
				i++
			default:
				b.WriteString("[^/]*")
				i++
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(string(glob[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
