package resolute

import (
	"testing"
	"time"
)

func TestTimeLeft(t *testing.T) {
	tests := map[string]struct {
		progress float64
		elapsed  time.Duration
		want     time.Duration
		ok       bool
	}{
		"a quarter done in ten minutes has thirty left": {progress: 0.25, elapsed: 10 * time.Minute, want: 30 * time.Minute, ok: true},
		"no progress gives no estimate":                 {progress: 0, elapsed: time.Hour},
		"a finished experiment has none":                {progress: 1, elapsed: time.Hour},
		"no time elapsed gives no pace":                 {progress: 0.5},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := TimeLeft(tc.progress, tc.elapsed)
			if got != tc.want || ok != tc.ok {
				t.Errorf("TimeLeft = %v, %t; want %v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFormatTimeLeft(t *testing.T) {
	tests := map[string]struct {
		d    time.Duration
		want string
	}{
		"seconds read as under a minute": {d: 40 * time.Second, want: "under a minute"},
		"minutes":                        {d: 12*time.Minute + 30*time.Second, want: "about 12m"},
		"hours and minutes":              {d: 3*time.Hour + 20*time.Minute, want: "about 3h 20m"},
		"days":                           {d: 80 * time.Hour, want: "about 3d"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := FormatTimeLeft(tc.d); got != tc.want {
				t.Errorf("FormatTimeLeft(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestFormatProgress(t *testing.T) {
	tests := map[string]struct {
		p    float64
		want string
	}{
		"nothing yet":                       {p: 0, want: "0.0%"},
		"575 of 600 batches":                {p: 575.0 / 600, want: "95.8%"},
		"a quarter is exact":                {p: 0.25, want: "25.0%"},
		"almost done does not read as done": {p: 0.9999, want: "99.9%"},
		"done":                              {p: 1, want: "100.0%"},
		"out of range is clamped":           {p: 1.5, want: "100.0%"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := FormatProgress(tc.p); got != tc.want {
				t.Errorf("FormatProgress(%v) = %q, want %q", tc.p, got, tc.want)
			}
		})
	}
}
