package expconf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/resolute-ml/resolute"
)

// FieldError is one problem with a config: the dotted path of the field
// (list items as `bind_mounts[0].host_path`), the 1-based YAML line where the
// parser knew it (0 when unknown, e.g. for values that came from a merged
// map), and what was expected.
type FieldError struct {
	Path    string
	Message string
	Line    int
}

// Error formats the error as `path: message`, with ` (line N)` when the line
// is known.
func (e FieldError) Error() string {
	s := e.Message
	if e.Path != "" {
		s = e.Path + ": " + e.Message
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d)", e.Line)
	}
	return s
}

// Errors is every problem found in a config, in document order. Parse
// functions return it as their error; get it back with errors.As.
type Errors []FieldError

// Error lists one FieldError per line.
func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, fe := range e {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// As lets errors.As turn Errors into a *resolute.Error with code
// resolute.EInvalid, so handlers map a bad config to 400 like any other
// invalid input.
func (e Errors) As(target any) bool {
	if t, ok := target.(**resolute.Error); ok {
		*t = &resolute.Error{Code: resolute.EInvalid, Message: e.Error()}
		return true
	}
	return false
}

// errOrNil returns nil for no errors so callers never see a non-nil empty
// Errors.
// It also puts them in document order (errors without a line last).
func (e Errors) errOrNil() error {
	if len(e) == 0 {
		return nil
	}
	sort.SliceStable(e, func(i, j int) bool {
		li, lj := e[i].Line, e[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
	return e
}

// suggest returns ` (did you mean X?)` when one of known is close to key, or
// "".
func suggest(key string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(key, k)
		if len(key) >= 3 && (strings.HasPrefix(k, key) || strings.HasPrefix(key, k)) {
			// "max" for "maxval", "slots_per_trials" for "slots_per_trial".
			d = min(d, 1)
		}
		if best == "" || d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	limit := 2
	if len(key) > 8 {
		limit = 3
	}
	if best == "" || bestDist > limit {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		// Long keys are never typos of ours; keep the cost bounded.
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
