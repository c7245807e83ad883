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

func TestLevelAtLeast(t *testing.T) {
	tests := map[string]struct {
		level, min string
		want       bool
	}{
		"no filter shows every line":                   {level: "DEBUG", min: "", want: true},
		"DEBUG shows INFO lines":                       {level: "INFO", min: "DEBUG", want: true},
		"INFO hides DEBUG lines":                       {level: "DEBUG", min: "INFO", want: false},
		"INFO shows a line without a level":            {level: "", min: "INFO", want: true},
		"WARNING hides a line without a level":         {level: "", min: "WARNING", want: false},
		"Go's WARN is Python's WARNING":                {level: "WARN", min: "WARNING", want: true},
		"ERROR shows CRITICAL":                         {level: "CRITICAL", min: "ERROR", want: true},
		"ERROR hides WARNING":                          {level: "WARNING", min: "ERROR", want: false},
		"levels are read in any case":                  {level: "info", min: "debug", want: true},
		"an unknown level ranks as a line without one": {level: "NOTICE", min: "WARNING", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := LevelAtLeast(tc.level, tc.min); got != tc.want {
				t.Errorf("LevelAtLeast(%q, %q) = %t, want %t", tc.level, tc.min, got, tc.want)
			}
		})
	}
}

func TestLevelsAtLeast(t *testing.T) {
	if diff := cmp.Diff([]string{"CRITICAL", "ERROR", "FATAL", "WARN", "WARNING"}, LevelsAtLeast("WARNING")); diff != "" {
		t.Errorf("LevelsAtLeast(WARNING) (-want +got):\n%s", diff)
	}
	if got := LevelsAtLeast(""); got != nil {
		t.Errorf("LevelsAtLeast(\"\") = %v, want nil (every level)", got)
	}
}

func TestDisplayLine(t *testing.T) {
	tests := map[string]struct {
		line, level, want string
	}{
		"the harness's level prefix is not repeated": {line: "INFO: [12] determined.core: hello", level: "INFO", want: "[12] determined.core: hello"},
		"a rank prefix stays":                        {line: "[rank=1] WARNING: slow", level: "WARNING", want: "[rank=1] slow"},
		"a plain line is shown as it is":             {line: "epoch 3 loss 0.2", level: "", want: "epoch 3 loss 0.2"},
		"a level word inside a line stays":           {line: "saw INFO: x", level: "", want: "saw INFO: x"},
		"the trailing newline goes":                  {line: "DEBUG: x\r\n", level: "DEBUG", want: "x"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := DisplayLine(tc.line, tc.level); got != tc.want {
				t.Errorf("DisplayLine(%q, %q) = %q, want %q", tc.line, tc.level, got, tc.want)
			}
		})
	}
}
