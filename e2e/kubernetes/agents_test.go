package kubernetes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
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
func (k *cluster) waits(id int64) string {
	k.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var q resolute.JobQueueResponse
		k.m.Call("GET", "/api/v1/job-queues", k.token, nil, &q)
		for _, j := range q.Jobs {
			if j.JobID == control.JobID(id) && j.Reason != "" {
				return j.Reason
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("experiment %d never waited: %+v\n%s", id, q.Jobs, k.m.Output())
		}
	}
}

// TestADisabledOrCordonedNodeTakesNoNewTrials: det agent disable on
// Kubernetes keeps the node's state in the database, and the scheduler
// places nothing there; a node cordoned with kubectl is likewise left
// alone; enabling the node lets the waiting trial run on it.
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

	// node 1 cordoned, node 0 disabled: nowhere to go.
	k.cordon(k.nodes[1], true)
	defer k.cordon(k.nodes[1], false)
	b := k.create(conf)
	k.waits(b)
	for _, p := range k.pods() {
		// Experiment a's checkpoint GC holds no slots, so the scheduler
		// does not place it: kube-scheduler may run it on the disabled
		// (not cordoned) node. Only trials are kept off.
		if strings.HasPrefix(p.Name, "checkpoint-gc-") {
			continue
		}
		t.Errorf("a pod while every node is disabled or cordoned: %s on %s", p.Name, p.Spec.NodeName)
	}
	if code := k.m.Call("POST", "/api/v1/agents/"+k.nodes[0]+"/enable", k.token, struct{}{}, &st); code != 200 || !st.Enabled {
		t.Fatalf("enable %s: %d %+v", k.nodes[0], code, st)
	}
	if e := k.waitDone(b, 2*time.Minute); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %d ended %s\n%s", b, e.State, k.m.Output())
	}
	nodes := seen()
	ta, tb := k.trials(a)[0].TaskID(), k.trials(b)[0].TaskID()
	if nodes[ta] != k.nodes[1] || nodes[tb] != k.nodes[0] {
		t.Errorf("trial of %d ran on %q (want %s, node 0 disabled); of %d on %q (want %s, node 1 cordoned)",
			a, nodes[ta], k.nodes[1], b, nodes[tb], k.nodes[0])
	}
}
