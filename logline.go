package resolute

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// NewAllocationLog is the Log event of one line of a task's output (raw,
// without its newline): the line made safe to store, and Determined's rank
// and level prefixes parsed off its Message.
func NewAllocationLog(allocationID, stream string, raw []byte, at time.Time) AllocationLog {
	line := cleanLine(raw)
	rank, level, msg := parseLine(line)
	return AllocationLog{AllocationID: allocationID, Time: at, Stream: stream, Level: level, Rank: rank, Line: line, Message: msg}
}

var logLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// parseLine splits Determined's prefixes off a line, as its ship_logs.py
// does: an optional "[rank=N] ", then an optional "LEVEL: ".
func parseLine(line string) (rank *int, level, msg string) {
	msg = line
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(msg, " "), "[rank="); ok {
		if end := strings.IndexByte(rest, ']'); end > 0 {
			if n, err := strconv.Atoi(rest[:end]); err == nil && n >= 0 && isDigits(rest[:end]) {
				rank = &n
				msg = strings.TrimPrefix(rest[end+1:], " ")
			}
		}
	}
	for _, l := range logLevels {
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(msg, " "), l+":"); ok {
			return rank, l, strings.TrimPrefix(rest, " ")
		}
	}
	return rank, "", msg
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// cleanLine makes a line safe to store as text: valid UTF-8, no NULs, no
// trailing carriage return.
func cleanLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte("\r"))
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// levelRank orders log levels, Python's and Go's spellings alike; a line
// without a level (plain output) ranks as INFO, as print() output reads.
var levelRank = map[string]int{"TRACE": 0, "DEBUG": 1, "": 2, "INFO": 2, "WARN": 3, "WARNING": 3, "ERROR": 4, "CRITICAL": 5, "FATAL": 5}

// LevelAtLeast says whether a line of level is shown under the filter min
// ("this level and above", as Determined's log filters read); "" shows all.
func LevelAtLeast(level, min string) bool {
	if min == "" {
		return true
	}
	r, ok := levelRank[strings.ToUpper(level)]
	if !ok {
		r = levelRank[""]
	}
	return r >= levelRank[strings.ToUpper(min)]
}

// LevelsAtLeast lists the stored levels LevelAtLeast shows under min, for a
// query; nil for every level.
func LevelsAtLeast(min string) []string {
	if min == "" {
		return nil
	}
	var out []string
	for l := range levelRank {
		if LevelAtLeast(l, min) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// DisplayLine is a stored line as a person reads it beside its level: the
// "LEVEL: " prefix that the level was parsed from (the harness's
// LOG_FORMAT) is dropped, so a line reads "INFO [12] core: ..." and not
// "INFO INFO: [12] core: ...". A rank prefix stays.
func DisplayLine(line, level string) string {
	line = strings.TrimRight(line, "\r\n")
	rank, parsed, msg := parseLine(line)
	if parsed == "" || parsed != level {
		return line
	}
	if rank != nil {
		return "[rank=" + strconv.Itoa(*rank) + "] " + msg
	}
	return msg
}
