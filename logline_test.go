package resolute

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	tests := map[string]struct {
		line, level, msg string
		rank             *int
	}{
		"Determined's LOG_FORMAT gives the level": {line: "INFO: [42] determined.core: hi", level: "INFO", msg: "[42] determined.core: hi"},
		"every level name is known":               {line: "CRITICAL: x", level: "CRITICAL", msg: "x"},
		"a rank prefix comes before the level":    {line: "[rank=3] DEBUG: [9] n: m", level: "DEBUG", msg: "[9] n: m", rank: intp(3)},
		"a rank without a level":                  {line: "[rank=0] hello", msg: "hello", rank: intp(0)},
		"a lower-case level is not a level":       {line: "info: nope", msg: "info: nope"},
		"a level inside the line is not a level":  {line: "x INFO: nope", msg: "x INFO: nope"},
		"a bad rank is kept as text":              {line: "[rank=-1] INFO: m", msg: "[rank=-1] INFO: m"},
		"an empty line":                           {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rank, level, msg := parseLine(tc.line)
			if diff := cmp.Diff([]any{tc.rank, tc.level, tc.msg}, []any{rank, level, msg}); diff != "" {
				t.Errorf("parseLine(%q) (-want +got):\n%s", tc.line, diff)
			}
		})
	}
}

func intp(n int) *int { return &n }
