package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestLogFlagsAreFilteredByTheMaster: --head, --tail, --rank-id, --source,
// --stdtype, --level and the timestamps pick the lines Determined's would,
// alone and together, on `det task logs` and `det cmd logs`.
func TestLogFlagsAreFilteredByTheMaster(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	r := c.run("", "cmd", "run", "echo", "hi")
	if r.code != 0 {
		t.Fatalf("det cmd run: %d %s", r.code, r.stderr)
	}
	id := regexp.MustCompile(`command-\d+`).FindString(r.stderr)
	c.ended("cmd", id)

	// Ten lines a second apart, a day ago: ranks 0 and 1 in turn, every
	// third on stderr, the last one an ERROR.
	base := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	var lines []resolute.TaskLog
	for i := range 10 {
		rank := i % 2
		l := resolute.TaskLog{TaskID: id, AllocationID: id + ".1", Time: base.Add(time.Duration(i) * time.Second),
			Level: "INFO", StdType: "stdout", Rank: &rank, Source: "task", Log: "line " + strconv.Itoa(i) + "\n"}
		if i%3 == 0 {
			l.StdType = "stderr"
		}
		if i == 9 {
			l.Level = "ERROR"
		}
		lines = append(lines, l)
	}
	if err := c.m.DB.InsertTaskLogs(t.Context(), lines); err != nil {
		t.Fatal(err)
	}
	at := func(i int) string { return base.Add(time.Duration(i) * time.Second).Format(time.RFC3339) }
	tests := map[string]struct {
		args []string
		want []string // the "line N" texts, in order
	}{
		"--tail is the last lines":                                        {[]string{"--tail", "2"}, []string{"line 8", "line 9"}},
		"--head with a rank is the first lines of that rank":              {[]string{"--head", "2", "--rank-id", "1"}, []string{"line 1", "line 3"}},
		"--tail with a rank is the last lines of that rank":               {[]string{"--tail", "2", "--rank-id", "0"}, []string{"line 6", "line 8"}},
		"two ranks and a time window":                                     {[]string{"--rank-id", "0", "--rank-id", "1", "--timestamp-after", at(2), "--timestamp-before", at(5)}, []string{"line 3", "line 4"}},
		"--stdtype keeps one stream":                                      {[]string{"--stdtype", "stderr"}, []string{"line 0", "line 3", "line 6", "line 9"}},
		"--level keeps that level and above":                              {[]string{"--level", "error"}, []string{"line 9"}},
		"--source task before a time is only those lines":                 {[]string{"--source", "task", "--timestamp-before", at(2)}, []string{"line 0", "line 1"}},
		"--source master leaves the task's lines out":                     {[]string{"--source", "master", "--rank-id", "0"}, nil},
		"-f with --tail prints the last lines of an ended task and stops": {[]string{"-f", "--tail", "1"}, []string{"line 9"}},
	}
	lineRE := regexp.MustCompile(`line \d`)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, noun := range []string{"task", "cmd"} {
				out := c.ok("", append([]string{noun, "logs", id}, tc.args...)...)
				got := lineRE.FindAllString(out, -1)
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Errorf("det %s logs %s %v = %q, want %q\n%s", noun, id, tc.args, got, tc.want, out)
				}
			}
		})
	}
	// The command's own output is there unfiltered, with --json a line each.
	if out := c.ok("", "task", "logs", id, "--head", "1", "--json"); !strings.Contains(out, `"taskId": "`+id+`"`) {
		t.Errorf("--json:\n%s", out)
	}
	for name, args := range map[string][]string{
		"--head and --tail together":  {"--head", "1", "--tail", "1"},
		"a time that is not RFC 3339": {"--timestamp-after", "yesterday"},
		"an unknown level":            {"--level", "LOUD"},
	} {
		if r := c.run("", append([]string{"trial", "logs", "1"}, args...)...); r.code != 2 {
			t.Errorf("%s: exit %d, want 2 (usage)\n%s", name, r.code, r.stderr)
		}
	}
}
