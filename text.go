package resolute

import (
	"net/url"
	"strings"
)

// HasControl reports whether s holds a character that text shown to other
// people must not: a control character (C0, DEL or C1: ESC starts the
// sequences that recolour, move or retitle a terminal, CR overwrites a
// line) or a bidirectional override or isolate (which reorders the text
// around it), except those listed in allow ("\n\t" for descriptions).
// Names of experiments, models, workspaces and labels are printed by det
// in other users' terminals, so they are checked with it.
func HasControl(s, allow string) bool {
	for _, r := range s {
		if (r < 0x20 || (r >= 0x7f && r <= 0x9f) || isBidiControl(r)) && !strings.ContainsRune(allow, r) {
			return true
		}
	}
	return false
}

func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// LocalPath says whether target is a clean path of this site, one every
// browser resolves to this origin: what a redirect or a link may take from
// input. Browsers drop tabs and newlines anywhere in a URL, trim spaces and
// control characters at its ends, and read a backslash as a slash, so
// "/\t/evil.example" and "/\\evil.example" mean //evil.example, another
// host. So any control character or backslash is refused rather than
// cleaned, and what remains must start with one slash, not two, and parse
// as a path with no scheme, host or user.
func LocalPath(target string) bool {
	if len(target) == 0 || len(target) > 4096 || target[0] != '/' || strings.HasPrefix(target, "//") {
		return false
	}
	for _, c := range target {
		if c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(target)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && u.Opaque == "" &&
		strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//")
}
