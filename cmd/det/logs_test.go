package main

import (
	"encoding/json"
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

// TestLogsAreFilteredByTheAgentAndContainerTheyRanIn: a real trial's and a
// real command's lines record the agent and container they were printed
// in (on the local resource manager: agent local, the allocation's process
// group named by its allocation id, the DET_CONTAINER_ID the task saw);
// --agent-id and --container-id keep them, any other agent or container
// none, said on stderr; each printed line shows its container.
func TestLogsAreFilteredByTheAgentAndContainerTheyRanIn(t *testing.T) {
	t.Parallel()
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t)))
	c.ok("", "e", "wait", id, "--polling-interval", "0.2")
	var trials []resolute.Trial
	if err := json.Unmarshal([]byte(c.ok("", "e", "lt", id, "--json")), &trials); err != nil || len(trials) != 1 {
		t.Fatalf("trials: %v", err)
	}
	tid := itoa64(trials[0].ID)
	r := c.run("", "cmd", "run", "sh", "-c", `echo "container is $DET_CONTAINER_ID"`)
	if r.code != 0 {
		t.Fatalf("det cmd run: %d %s", r.code, r.stderr)
	}
	cmdID := regexp.MustCompile(`command-\d+`).FindString(r.stderr)
	c.ended("cmd", cmdID)

	// What the lines record is where they ran.
	jsonLines := func(args ...string) []resolute.TaskLog {
		t.Helper()
		var out []resolute.TaskLog
		dec := json.NewDecoder(strings.NewReader(c.ok("", append(args, "--json")...)))
		for dec.More() {
			var tl resolute.TaskLog
			if err := dec.Decode(&tl); err != nil {
				t.Fatal(err)
			}
			out = append(out, tl)
		}
		return out
	}
	for _, task := range []struct{ noun, id, container string }{{"trial", tid, "trial-" + tid + ".1"}, {"task", cmdID, cmdID + ".1"}} {
		lines := jsonLines(task.noun, "logs", task.id, "--source", "task")
		if len(lines) == 0 {
			t.Fatalf("%s %s printed nothing", task.noun, task.id)
		}
		for _, l := range lines {
			if l.AgentID != "local" || l.ContainerID != task.container {
				t.Errorf("%s: a line of agent %q container %q, want local and %s: %q", task.id, l.AgentID, l.ContainerID, task.container, l.Log)
			}
		}
		for _, l := range jsonLines(task.noun, "logs", task.id, "--source", "master") {
			if l.AgentID != "" || l.ContainerID != "" {
				t.Errorf("%s: a master's line of agent %q container %q: %q", task.id, l.AgentID, l.ContainerID, l.Log)
			}
		}
	}
	if out := c.ok("", "cmd", "logs", cmdID); !strings.Contains(out, "container is "+cmdID+".1") || !strings.Contains(out, "] "+cmdID+".1 || container is") {
		t.Errorf("the command's logs do not show its container as the task saw it:\n%s", out)
	}

	// The filters keep the lines of where they ran, and nothing else.
	trialLine := "validation_loss" // the example prints its metrics
	tests := map[string]struct {
		args []string
		want string // a text the lines have; "" for none
	}{
		"det trial logs by the agent":                       {[]string{"trial", "logs", tid, "--agent-id", "local"}, trialLine},
		"det trial logs by the container":                   {[]string{"trial", "logs", tid, "--container-id", "trial-" + tid + ".1"}, trialLine},
		"det experiment logs by agent and container":        {[]string{"experiment", "logs", id, "--agent-id", "local", "--container-id", "trial-" + tid + ".1"}, trialLine},
		"det task logs of the command by its container":     {[]string{"task", "logs", cmdID, "--container-id", cmdID + ".1"}, "container is " + cmdID},
		"det cmd logs by one of two agents":                 {[]string{"cmd", "logs", cmdID, "--agent-id", "node-9", "--agent-id", "local"}, "container is " + cmdID},
		"det trial logs of another agent":                   {[]string{"trial", "logs", tid, "--agent-id", "node-9"}, ""},
		"det trial logs of another container":               {[]string{"trial", "logs", tid, "--container-id", "trial-" + tid + ".2"}, ""},
		"det experiment logs of another container":          {[]string{"experiment", "logs", id, "--container-id", cmdID + ".1"}, ""},
		"det task logs of the right agent, wrong container": {[]string{"task", "logs", cmdID, "--agent-id", "local", "--container-id", "trial-" + tid + ".1"}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := c.run("", tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if tc.want == "" {
				if strings.TrimSpace(r.stdout) != "" || !strings.Contains(r.stderr, "No log lines match --") {
					t.Errorf("want no lines and a note on stderr:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
				}
				return
			}
			if !strings.Contains(r.stdout, tc.want) || r.stderr != "" {
				t.Errorf("want lines with %q:\nstdout: %s\nstderr: %s", tc.want, r.stdout, r.stderr)
			}
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if !strings.Contains(l, ".1 ") {
					t.Errorf("a line without its container: %q", l)
				}
			}
		})
	}
}
