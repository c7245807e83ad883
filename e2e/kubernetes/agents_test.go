package kubernetes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/k8s"
)

// cordon sets a node's spec.unschedulable, as kubectl cordon and uncordon
// do.
func (k *cluster) cordon(node string, on bool) {
	k.t.Helper()
	ctx := context.Background()
	n, err := k.c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	n.Spec.Unschedulable = on
	if _, err := k.c.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// waits waits until the scheduler has left an experiment's job waiting,
// and returns why.
func (k *cluster) waits(id int64) string { return k.jobWaits(control.JobID(id)) }

// jobWaits waits until the scheduler has left a job (an experiment's, or a
// task's, named by the task's id) waiting, and returns why.
func (k *cluster) jobWaits(jobID string) string {
	k.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var q resolute.JobQueueResponse
		k.m.Call("GET", "/api/v1/job-queues", k.token, nil, &q)
		for _, j := range q.Jobs {
			if j.JobID == jobID && j.Reason != "" {
				return j.Reason
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("job %s never waited: %+v\n%s", jobID, q.Jobs, k.m.Output())
		}
	}
}

// cpuCommand starts a command that holds no slots and sleeps.
func (k *cluster) cpuCommand() string {
	k.t.Helper()
	var c resolute.TaskResponse
	req := resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n", Entrypoint: []string{"sleep", "60"}}
	if code := k.m.Call("POST", "/api/v1/commands", k.token, req, &c); code != 200 {
		k.t.Fatalf("start a command: %d", code)
	}
	return c.Task.ID
}

// nodeOf waits until a task's pod is placed and returns its node.
func (k *cluster) nodeOf(taskID string) string {
	k.t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, p := range k.pods() {
			if p.Labels[k8s.LabelTaskID] == taskID && p.Spec.NodeName != "" {
				return p.Spec.NodeName
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("task %s's pod was never placed\n%s", taskID, k.m.Output())
		}
	}
}

// TestADisabledOrCordonedNodeTakesNoNewTrials: det agent disable on
// Kubernetes keeps the node's state in the database, and nothing new lands
// there: the scheduler places no trial there, and the pods of tasks without
// slots (which kube-scheduler places) keep off it; a node cordoned with
// kubectl is likewise left alone; enabling the node lets the waiting trial
// and command run on it.
func TestADisabledOrCordonedNodeTakesNoNewTrials(t *testing.T) {
	k := newCluster(t)
	conf := strings.NewReplacer("slots_per_trial: 1", "slots_per_trial: 4", "max_trials: 4", "max_trials: 1",
		"adaptive_asha", "random", "max_concurrent_trials: 4", "max_concurrent_trials: 1").Replace(ashaConfig)
	conf = strings.Replace(conf, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 8}\n", 1)
	seen := k.watchPods()

	var st resolute.AgentStateResponse
	if code := k.m.Call("POST", "/api/v1/agents/"+k.nodes[0]+"/disable", k.token, resolute.DisableAgentRequest{Drain: true}, &st); code != 200 || st.Enabled {
		t.Fatalf("disable %s: %d %+v", k.nodes[0], code, st)
	}
	a := k.create(conf)
	if e := k.waitDone(a, 2*time.Minute); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %d ended %s\n%s", a, e.State, k.m.Output())
	}

	// Tasks that hold no slots are placed by kube-scheduler, but never on
	// the disabled node: of four, each has even odds without the rule.
	for range 4 {
		id := k.cpuCommand()
		if node := k.nodeOf(id); node != k.nodes[1] {
			t.Errorf("command %s (no slots) ran on %s; %s is disabled", id, node, k.nodes[0])
		}
		if code := k.m.Call("POST", "/api/v1/commands/"+id+"/kill", k.token, struct{}{}, nil); code != 200 {
			t.Fatalf("kill %s: %d", id, code)
		}
	}
	// Nothing landed there meanwhile: experiment a's trial, its checkpoint
	// GC (no slots either) and the commands.
	placed := seen()
	for task, node := range placed {
		if node != k.nodes[1] {
			t.Errorf("task %s ran on %s, which is disabled", task, node)
		}
	}
	ta := k.trials(a)[0].TaskID()
	if placed[ta] != k.nodes[1] {
		t.Errorf("trial of %d ran on %q, want %s (node 0 disabled)", a, placed[ta], k.nodes[1])
	}
	seen = k.watchPods()

	// node 1 cordoned, node 0 disabled: nowhere to go, with or without slots.
	k.cordon(k.nodes[1], true)
	defer k.cordon(k.nodes[1], false)
	b := k.create(conf)
	k.waits(b)
	cmd := k.cpuCommand()
	if why := k.jobWaits(cmd); !strings.Contains(why, "waits for an agent that is not disabled or excluded") {
		t.Errorf("the command waits %q", why)
	}
	for _, p := range k.pods() {
		if p.Spec.NodeName == k.nodes[0] || p.Labels[k8s.LabelTaskID] == cmd {
			t.Errorf("a pod while every node is disabled or cordoned: %s on %s", p.Name, p.Spec.NodeName)
		}
	}
	if code := k.m.Call("POST", "/api/v1/agents/"+k.nodes[0]+"/enable", k.token, struct{}{}, &st); code != 200 || !st.Enabled {
		t.Fatalf("enable %s: %d %+v", k.nodes[0], code, st)
	}
	if e := k.waitDone(b, 2*time.Minute); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %d ended %s\n%s", b, e.State, k.m.Output())
	}
	if node := k.nodeOf(cmd); node != k.nodes[0] {
		t.Errorf("the waiting command ran on %s once %s was enabled", node, k.nodes[0])
	}
	k.m.Call("POST", "/api/v1/commands/"+cmd+"/kill", k.token, struct{}{}, nil)
	tb := k.trials(b)[0].TaskID()
	if node := seen()[tb]; node != k.nodes[0] {
		t.Errorf("trial of %d ran on %q, want %s (node 1 cordoned)", b, node, k.nodes[0])
	}
}
