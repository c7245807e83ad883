package kubernetes_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/k8s"
)

// command starts a command of slots slots that prints a line and sleeps.
func (k *cluster) command(slots string) string {
	k.t.Helper()
	var c resolute.TaskResponse
	req := resolute.CreateTaskRequest{Config: "resources: {slots: " + slots + "}\n",
		Entrypoint: []string{"sh", "-c", "echo hello from the pod; sleep 60"}}
	if code := k.m.Call("POST", "/api/v1/commands", k.token, req, &c); code != 200 {
		k.t.Fatalf("start a command: %d", code)
	}
	return c.Task.ID
}

// taskLogs reads a task's log lines under the query q.
func (k *cluster) taskLogs(id string, q url.Values) []resolute.TaskLog {
	k.t.Helper()
	var out []resolute.TaskLog
	for _, l := range strings.Split(k.m.Get("/api/v1/tasks/"+id+"/logs?"+q.Encode(), k.token), "\n") {
		var r struct{ Result resolute.TaskLog }
		if json.Unmarshal([]byte(l), &r) == nil && r.Result.Log != "" {
			out = append(out, r.Result)
		}
	}
	return out
}

// TestADisabledSlotOfANodeTakesNoNewPodAndLogsNameTheirNodeAndPod: with
// one of node 0's four slots disabled, a command of four slots runs on
// node 1, and a second waits until the slot is enabled, then runs on node
// 0; each command's lines record the node and pod they were printed in,
// and the logs API filters by them.
func TestADisabledSlotOfANodeTakesNoNewPodAndLogsNameTheirNodeAndPod(t *testing.T) {
	k := newCluster(t)
	var st resolute.SlotStateResponse
	if code := k.m.Call("POST", "/api/v1/agents/"+k.nodes[0]+"/slots/2/disable", k.token, resolute.DisableSlotRequest{}, &st); code != 200 || st.Enabled {
		t.Fatalf("disable slot 2 of %s: %d %+v", k.nodes[0], code, st)
	}
	var agents resolute.AgentsResponse
	k.m.Call("GET", "/api/v1/agents", k.token, nil, &agents)
	for _, a := range agents.Agents {
		for _, s := range a.Slots {
			if want := !(a.ID == k.nodes[0] && s.ID == 2); s.Enabled != want {
				t.Errorf("slot %d of %s: enabled %t", s.ID, a.ID, s.Enabled)
			}
		}
	}

	first := k.command("4")
	if node := k.nodeOf(first); node != k.nodes[1] {
		t.Errorf("a four-slot command ran on %s; a slot of %s is disabled", node, k.nodes[0])
	}
	second := k.command("4")
	k.jobWaits(second)
	if code := k.m.Call("POST", "/api/v1/agents/"+k.nodes[0]+"/slots/2/enable", k.token, struct{}{}, &st); code != 200 || !st.Enabled {
		t.Fatalf("enable: %d %+v", code, st)
	}
	if node := k.nodeOf(second); node != k.nodes[0] {
		t.Errorf("the waiting command ran on %s once the slot of %s was enabled", node, k.nodes[0])
	}

	// Each command's lines name the node and pod they came from.
	for id, node := range map[string]string{first: k.nodes[1], second: k.nodes[0]} {
		pod := ""
		for _, p := range k.pods() {
			if p.Labels[k8s.LabelTaskID] == id {
				pod = p.Name
			}
		}
		var lines []resolute.TaskLog
		for deadline := time.Now().Add(time.Minute); len(lines) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			lines = k.taskLogs(id, url.Values{"agent_ids": {node}, "container_ids": {pod}})
		}
		if len(lines) == 0 || !strings.Contains(lines[0].Log, "hello from the pod") || lines[0].AgentID != node || lines[0].ContainerID != pod {
			t.Errorf("%s's lines from %s, pod %s: %+v\nall: %+v", id, node, pod, lines, k.taskLogs(id, nil))
		}
		other := k.nodes[0]
		if node == other {
			other = k.nodes[1]
		}
		if l := k.taskLogs(id, url.Values{"agentIds": {other}}); len(l) != 0 {
			t.Errorf("%s's lines from %s, where it did not run: %+v", id, other, l)
		}
		k.m.Call("POST", "/api/v1/commands/"+id+"/kill", k.token, struct{}{}, nil)
	}
}
