package resolute

import "testing"

func TestHasControl(t *testing.T) {
	tests := map[string]struct {
		s, allow string
		want     bool
	}{
		"plain text":                              {"resnet-50 (lr=0.1)", "", false},
		"letters of any script and emoji":         {"实验 – é ✓ 🚀", "", false},
		"a zero-width joiner inside an emoji":     {"👩\u200d🔬", "", false},
		"ESC starting a colour sequence":          {"\x1b[31mred", "", true},
		"a carriage return overwriting the line":  {"ok\rFAILED", "", true},
		"a newline in a name":                     {"a\nb", "", true},
		"a newline in a description, allowed":     {"a\nb\tc", "\n\t", false},
		"a carriage return even in a description": {"a\r\nb", "\n\t", true},
		"DEL":                      {"a\x7f", "", true},
		"a C1 control (CSI)":       {"a\u009b31m", "", true},
		"a right-to-left override": {"exe.\u202etxt", "", true},
		"a bidi isolate":           {"a\u2066b", "", true},
		"NUL":                      {"a\x00", "", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := HasControl(tc.s, tc.allow); got != tc.want {
				t.Errorf("HasControl(%q, %q) = %v, want %v", tc.s, tc.allow, got, tc.want)
			}
		})
	}
}
