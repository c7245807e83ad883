package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestAgentAndSlotListShowTheMachine(t *testing.T) {
	c := newCLI(t, handlerstest.Options{Slots: 3})
	c.loginAdmin()
	var agents []resolute.Agent
	if err := json.Unmarshal([]byte(c.ok("", "agent", "list", "--json")), &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].ID != "local" || len(agents[0].Slots) != 3 {
		t.Fatalf("agents = %+v, want the local machine with 3 slots", agents)
	}
	out := c.ok("", "a", "ls")
	for _, want := range []string{"Agent ID", "Used by Other Pods", "local", "3"} {
		if !strings.Contains(out, want) {
			t.Errorf("det agent list lacks %q:\n%s", want, out)
		}
	}
	var slots []resolute.Slot
	if err := json.Unmarshal([]byte(c.ok("", "slot", "list", "--json")), &slots); err != nil {
		t.Fatal(err)
	}
	if len(slots) != 3 || slots[2].ID != 2 || slots[2].Agent != "local" {
		t.Errorf("slots = %+v", slots)
	}
	if out := c.ok("", "s", "ls"); !strings.Contains(out, "Slot ID") || strings.Count(out, "local") != 3 {
		t.Errorf("det slot list:\n%s", out)
	}
}
