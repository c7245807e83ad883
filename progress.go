package resolute

import (
	"math"
	"strconv"
	"time"
)

// TimeLeft estimates how long an experiment that has run for elapsed and
// is progress of the way through needs to finish, at the pace it kept so
// far; false when there is no pace to go by yet (no progress, or done).
func TimeLeft(progress float64, elapsed time.Duration) (time.Duration, bool) {
	if progress <= 0 || progress >= 1 || math.IsNaN(progress) || elapsed <= 0 {
		return 0, false
	}
	left := float64(elapsed) * (1 - progress) / progress
	if left >= float64(math.MaxInt64) {
		return 0, false
	}
	return time.Duration(left).Round(time.Second), true
}

// TimeLeft is the experiment's estimated time left at now (TimeLeft from
// its start): only an active experiment has one. The web UI and `det`
// show this same estimate beside the same stored progress.
func (e Experiment) TimeLeft(now time.Time) (time.Duration, bool) {
	if e.State != StateActive || e.EndedAt != nil {
		return 0, false
	}
	return TimeLeft(e.Progress, now.Sub(e.CreatedAt))
}

// FormatTimeLeft writes a time-left estimate the way people read one:
// "about 3h 20m", "about 12m", "under a minute".
func FormatTimeLeft(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return "about " + itoa(int64(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return "about " + itoa(int64(d/time.Hour)) + "h " + itoa(int64(d%time.Hour/time.Minute)) + "m"
	}
	return "about " + itoa(int64(d/(24*time.Hour))) + "d"
}

// FormatProgress writes a progress from 0 to 1 as a percentage with one
// decimal, rounded down so that an unfinished experiment never reads
// "100.0%"; the web UI and `det` both write progress with it.
func FormatProgress(p float64) string {
	if math.IsNaN(p) {
		p = 0
	}
	p = min(max(p, 0), 1)
	return strconv.FormatFloat(math.Floor(p*1000+1e-9)/10, 'f', 1, 64) + "%"
}
