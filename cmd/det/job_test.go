package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// queued creates an experiment whose one trial needs more slots than the
// test master has, so it stays in the queue; it returns its job id.
func (c *cli) queued(name string) string {
	c.t.Helper()
	cfg := "name: " + name + "\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 2}\n"
	return "experiment-" + createdID(c.t, c.ok("", "experiment", "create", writeConfig(c.t, cfg), c.t.TempDir()))
}

// jobList runs `det job list --json` and returns the jobs.
func (c *cli) jobList(args ...string) []resolute.Job {
	c.t.Helper()
	var jobs []resolute.Job
	out := c.ok("", append([]string{"job", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		c.t.Fatalf("job list --json: %v\n%s", err, out)
	}
	return jobs
}

func ids(jobs []resolute.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobID)
	}
	return out
}

func TestJobListAndUpdateChangeTheQueue(t *testing.T) {
	c := newCLI(t, handlerstest.Options{Slots: 1})
	c.loginAdmin()
	a, b, d := c.queued("first"), c.queued("second"), c.queued("third")

	if diff := cmp.Diff([]string{a, b, d}, ids(c.jobList())); diff != "" {
		t.Fatalf("submission order (-want +got):\n%s", diff)
	}
	if got := c.jobList("-p", "default"); len(got) != 3 || got[0].Username != "admin" || got[0].RequestedSlots != 2 || got[0].State != "QUEUED" {
		t.Fatalf("the default pool's jobs: %+v", got)
	}
	// The table says why each waits, once the scheduler has looked.
	deadline := time.Now().Add(20 * time.Second)
	out := c.ok("", "j", "ls")
	for !strings.Contains(out, "can never run") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		out = c.ok("", "j", "ls")
	}
	wants := []string{"#", "ID", "Type", "Job Name", "Priority", "Weight", "Submitted", "Slots (allocated/requested)", "State", "User", "Reason",
		a, "EXPERIMENT", "first", "0/2", "QUEUED", "admin", "can never run"}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("det job list lacks %q:\n%s", w, out)
		}
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[2], "1 ") || !strings.HasPrefix(lines[4], "3 ") {
		t.Errorf("det job list rows:\n%s", out)
	}

	if out := c.ok("", "job", "update", d, "--ahead-of", a); out != "Updated job "+d+"\n" {
		t.Errorf("update says %q", out)
	}
	if diff := cmp.Diff([]string{d, a, b}, ids(c.jobList())); diff != "" {
		t.Fatalf("after --ahead-of (-want +got):\n%s", diff)
	}
	c.ok("", "job", "u", a, "--priority", "10", "--weight", "3")
	c.ok("", "job", "update-batch", d+".behindOf="+b, b+".weight=0.5", b+".priority=20")
	jobs := c.jobList()
	if diff := cmp.Diff([]string{a, b, d}, ids(jobs)); diff != "" {
		t.Fatalf("after the batch (-want +got):\n%s", diff)
	}
	if jobs[0].Priority != 10 || jobs[0].Weight != 3 || jobs[1].Priority != 20 || jobs[1].Weight != 0.5 {
		t.Errorf("priorities and weights: %+v", jobs)
	}

	// The master's refusals come back as its message, exit 1; mistakes in
	// how det was called exit 2 before anything is sent.
	tests := map[string]struct {
		args []string
		code int
		want string
	}{
		"a priority out of range":       {[]string{"job", "update", a, "--priority", "150"}, 1, "Error: priority: must be between 1 and 99, got 150\n"},
		"a batch item out of range":     {[]string{"job", "update-batch", a + ".weight=-1"}, 1, "Error: weight: must be more than 0, got -1\n"},
		"an unknown pool":               {[]string{"job", "update", a, "--resource-pool", "gpu"}, 1, "Error: resourcePool:"},
		"a move next to itself":         {[]string{"job", "update", a, "--behind-of", a}, 1, "Error: a job cannot move next to itself\n"},
		"an update with nothing to say": {[]string{"job", "update", a}, 2, "Error: nothing to change"},
		"both sides at once":            {[]string{"job", "update", a, "--ahead-of", b, "--behind-of", d}, 2, "Error: give --ahead-of or --behind-of, not both\n"},
		"a batch item without a field":  {[]string{"job", "update-batch", a + "=3"}, 2, "expected JOB_ID.FIELD=VALUE"},
		"an unknown batch field":        {[]string{"job", "update-batch", a + ".colour=red"}, 2, `unknown field "colour"`},
		"a batch priority in words":     {[]string{"job", "update-batch", a + ".priority=high"}, 2, `priority must be an integer, got "high"`},
		"an unknown pool to list":       {[]string{"job", "list", "-p", "gpu"}, 1, "Error: resource pool \"gpu\" not found\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := c.run("", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}
	// A refused batch changes nothing.
	if diff := cmp.Diff(jobs, c.jobList(), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".Reason" || p.Last().String() == ".JobsAhead"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("the queue changed after refusals (-before +after):\n%s", diff)
	}
}

func TestParseJobUpdatesReadsDeterminedsBatchSyntax(t *testing.T) {
	p, w, pool := 5, 1.5, "gpu"
	got, err := parseJobUpdates([]string{"experiment-1.priority=5", "experiment-2.weight=1.5", "experiment-3.resourcePool=gpu",
		"experiment-4.aheadOf=experiment-1", "experiment-5.behind_of=experiment-2"})
	if err != nil {
		t.Fatal(err)
	}
	want := []resolute.QueueControl{{JobID: "experiment-1", Priority: &p}, {JobID: "experiment-2", Weight: &w},
		{JobID: "experiment-3", ResourcePool: &pool}, {JobID: "experiment-4", AheadOf: "experiment-1"},
		{JobID: "experiment-5", BehindOf: "experiment-2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
