package resolute

import "strings"

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
