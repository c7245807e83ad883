package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// agent reads one agent from det agent list --json.
func (c *cli) agent(id string) resolute.Agent {
	c.t.Helper()
	var agents []resolute.Agent
	if err := json.Unmarshal([]byte(c.ok("", "agent", "list", "--json")), &agents); err != nil {
		c.t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == id {
			return a
		}
	}
	c.t.Fatalf("no agent %s in %+v", id, agents)
	return resolute.Agent{}
}

// waiting waits until the scheduler has looked at a task's job and left it
// waiting, and returns why.
func (c *cli) waiting(taskID string) string {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var jobs []resolute.Job
		json.Unmarshal([]byte(c.ok("", "job", "list", "--json")), &jobs)
		for _, j := range jobs {
			if j.EntityID == taskID && j.Reason != "" {
				return j.Reason
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s never waited: %+v", taskID, jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAgentDisableDrainsAndEnableResumes: a drained agent keeps what runs
// there and takes nothing new; disabling it without --drain stops what
// runs; enabling it lets the waiting work start. The state is the
// database's, shown in det agent list; only administrators change it.
func TestAgentDisableDrainsAndEnableResumes(t *testing.T) {
	c := newCLI(t, handlerstest.Options{Slots: 2})
	c.loginAdmin()
	long := strings.TrimSpace(c.ok("", "cmd", "run", "-d", "sleep", "300"))
	if task := c.started("cmd", long); task.State != resolute.TaskRunning {
		t.Fatalf("the long command: %+v", task)
	}

	out := c.ok("", "agent", "disable", "local", "--drain")
	if !strings.Contains(out, "Tasks still in progress on draining nodes.") || !strings.Contains(out, long+".") {
		t.Errorf("disable --drain does not list what still runs:\n%s", out)
	}
	if a := c.agent("local"); a.Enabled || !a.Draining {
		t.Errorf("after disable --drain: enabled %t draining %t", a.Enabled, a.Draining)
	}
	if out := c.ok("", "agent", "list"); !strings.Contains(out, "Draining") || !strings.Contains(out, "local") {
		t.Errorf("det agent list:\n%s", out)
	}
	// One slot is free, but nothing new lands on the drained agent.
	later := strings.TrimSpace(c.ok("", "cmd", "run", "-d", "echo", "later"))
	c.waiting(later)
	if task := c.describe("cmd", later); task.State != resolute.TaskQueued {
		t.Errorf("a command after the drain: %s, want QUEUED", task.State)
	}
	if task := c.describe("cmd", long); task.State != resolute.TaskRunning {
		t.Errorf("what ran before the drain: %s, want RUNNING", task.State)
	}
	// A command that needs no slot does not land there either.
	cpu := strings.TrimSpace(c.ok("", "cmd", "run", "-d", "--config", "resources.slots=0", "echo", "cpu"))
	if why := c.waiting(cpu); !strings.Contains(why, "waits for an agent that is not disabled or excluded in pool default") {
		t.Errorf("a command without slots after the drain waits %q", why)
	}

	// Only administrators.
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	for _, verb := range []string{"enable", "disable"} {
		if r := c.run("", "agent", verb, "local"); r.code != 1 || !strings.Contains(r.stderr, "only administrators") {
			t.Errorf("eve: det agent %s: exit %d %s", verb, r.code, r.stderr)
		}
	}
	c.ok("", "user", "login", "admin")
	if r := c.run("", "agent", "disable", "nowhere"); r.code != 1 || !strings.Contains(r.stderr, "agent nowhere not found") {
		t.Errorf("an unknown agent: exit %d %s", r.code, r.stderr)
	}
	if r := c.run("", "agent", "enable"); r.code != 2 {
		t.Errorf("neither an agent nor --all: exit %d", r.code)
	}

	// Disabled without --drain, what runs there is stopped.
	c.ok("", "agent", "disable", "local")
	if task := c.ended("cmd", long); task.ExitCode != nil && *task.ExitCode == 0 {
		t.Errorf("the long command ended on its own: %+v", task)
	}
	if task := c.describe("cmd", later); task.State != resolute.TaskQueued {
		t.Errorf("a command on a disabled agent: %s, want QUEUED", task.State)
	}
	// Enabled again, the waiting command runs.
	c.ok("", "agent", "enable", "--all")
	for _, id := range []string{later, cpu} {
		if task := c.ended("cmd", id); task.ExitCode == nil || *task.ExitCode != 0 {
			t.Errorf("a waiting command after enable: %+v", task)
		}
	}
	if a := c.agent("local"); !a.Enabled || a.Draining {
		t.Errorf("after enable: enabled %t draining %t", a.Enabled, a.Draining)
	}

	// A node deleted while disabled can still be enabled, once.
	conn, err := pgx.Connect(t.Context(), c.m.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), "INSERT INTO agent_states (agent_id, draining) VALUES ('gone-node', true)"); err != nil {
		t.Fatal(err)
	}
	c.ok("", "agent", "enable", "gone-node")
	if r := c.run("", "agent", "enable", "gone-node"); r.code != 1 || !strings.Contains(r.stderr, "agent gone-node not found") {
		t.Errorf("enabling it again: exit %d %s", r.code, r.stderr)
	}
}
