package resolute

import (
	"bytes"
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
