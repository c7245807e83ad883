package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// slots reads the slots of det slot list --json, by number.
func (c *cli) slots() map[int]resolute.Slot {
	c.t.Helper()
	var list []resolute.Slot
	if err := json.Unmarshal([]byte(c.ok("", "slot", "list", "--json")), &list); err != nil {
		c.t.Fatal(err)
	}
	out := map[int]resolute.Slot{}
	for _, s := range list {
		out[s.ID] = s
	}
	return out
}

// TestSlotDisableKeepsNewWorkOffItAndEnableGivesItBack: on a machine of two
// slots, a disabled slot takes nothing new (a one-slot command lands on
// the other, a second one waits); enabling it lets the waiting one run;
// with --drain the command holding a slot keeps running, without it is
// stopped. The state is the database's, shown in det slot list and
// GET /api/v1/agents; only administrators change it.
func TestSlotDisableKeepsNewWorkOffItAndEnableGivesItBack(t *testing.T) {
	c := newCLI(t, handlerstest.Options{Slots: 2})
	c.loginAdmin()

	if out := c.ok("", "slot", "disable", "local", "0"); !strings.Contains(out, "Disabled slot 0 of agent local") {
		t.Errorf("det slot disable: %q", out)
	}
	if s := c.slots(); s[0].Enabled || s[0].Draining || !s[1].Enabled {
		t.Errorf("after disabling slot 0: %+v", s)
	}
	if out := c.ok("", "slot", "list"); !strings.Contains(out, "Enabled") || !strings.Contains(out, "Draining") {
		t.Errorf("det slot list:\n%s", out)
	}
	// The API answers Determined's agents call with each slot's state.
	login, err := client.New(c.m.URL).Login(t.Context(), "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := client.New(c.m.URL, client.WithToken(login.Token)).Agents(t.Context())
	if err != nil || len(agents) != 1 || agents[0].Slots[0].Enabled || !agents[0].Slots[1].Enabled || !agents[0].Enabled {
		t.Errorf("GET /api/v1/agents: %v %+v", err, agents)
	}

	// A one-slot command lands on the other slot; the next one waits.
	long := strings.TrimSpace(c.ok("", "cmd", "run", "-d", "sleep", "300"))
	c.started("cmd", long)
	if s := c.slots(); taskOf(s[1].AllocationID) != long || s[0].AllocationID != "" {
		t.Errorf("the first command's slot: %+v", s)
	}
	later := strings.TrimSpace(c.ok("", "cmd", "run", "-d", "echo", "later"))
	c.waiting(later)
	if task := c.describe("cmd", later); task.State != resolute.TaskQueued {
		t.Errorf("a command with only a disabled slot free: %s, want QUEUED", task.State)
	}

	// Enabled again, the waiting command runs there.
	if out := c.ok("", "slot", "enable", "local", "0"); !strings.Contains(out, "Enabled slot 0 of agent local") {
		t.Errorf("det slot enable: %q", out)
	}
	if task := c.ended("cmd", later); task.ExitCode == nil || *task.ExitCode != 0 {
		t.Errorf("the waiting command after enable: %+v", task)
	}
	if s := c.slots(); !s[0].Enabled {
		t.Errorf("after enable: %+v", s[0])
	}

	// Drained, the slot keeps what holds it.
	out := c.ok("", "slot", "disable", "local", "1", "--drain")
	if !strings.Contains(out, "Disabled slot 1 of agent local") || !strings.Contains(out, long) {
		t.Errorf("det slot disable --drain does not name what still runs:\n%s", out)
	}
	if s := c.slots(); s[1].Enabled || !s[1].Draining {
		t.Errorf("after --drain: %+v", s[1])
	}
	if task := c.describe("cmd", long); task.State != resolute.TaskRunning {
		t.Errorf("the command on the drained slot: %s, want RUNNING", task.State)
	}
	// The state is in PostgreSQL, as a restarted master reads it.
	conn, err := pgx.Connect(t.Context(), c.m.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var draining bool
	if err := conn.QueryRow(t.Context(), "SELECT draining FROM slot_states WHERE agent_id = 'local' AND slot_id = 1").Scan(&draining); err != nil || !draining {
		t.Errorf("slot_states of slot 1: draining %t, %v", draining, err)
	}

	// Only administrators.
	c.ok("", "user", "create", "eve", "--password", "s3cret-pw")
	c.ok("s3cret-pw\n", "user", "login", "eve")
	for _, verb := range []string{"enable", "disable"} {
		if r := c.run("", "slot", verb, "local", "0"); r.code != 1 || !strings.Contains(r.stderr, "only administrators") {
			t.Errorf("eve: det slot %s: exit %d %s", verb, r.code, r.stderr)
		}
	}
	c.ok("", "user", "login", "admin")
	for args, want := range map[string]string{
		"nowhere 0": "agent nowhere not found",
		"local 7":   "slot 7 of agent local not found",
	} {
		if r := c.run("", append([]string{"slot", "disable"}, strings.Fields(args)...)...); r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("det slot disable %s: exit %d %s, want %q", args, r.code, r.stderr, want)
		}
	}
	if r := c.run("", "slot", "disable", "local", "first"); r.code != 2 {
		t.Errorf("a slot that is not a number: exit %d", r.code)
	}

	// Disabled without --drain, what holds it is stopped.
	c.ok("", "slot", "disable", "local", "1")
	if task := c.ended("cmd", long); task.ExitCode != nil && *task.ExitCode == 0 {
		t.Errorf("the long command ended on its own: %+v", task)
	}
	c.ok("", "slot", "enable", "local", "1")
	if s := c.slots(); !s[0].Enabled || !s[1].Enabled || s[1].Draining {
		t.Errorf("after enabling both: %+v", s)
	}
}

// taskOf is the task of an allocation id "<task>.<run>".
func taskOf(allocationID string) string {
	task, _, _ := strings.Cut(allocationID, ".")
	return task
}
