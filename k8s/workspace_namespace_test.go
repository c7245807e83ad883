package k8s_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute/k8s"
)

// TestAWorkspacesPodsRunInItsNamespace: a launch that names its
// workspace's namespace puts the ConfigMap and the pods there, not in the
// pool's; the pod runs, its log and exit are read, and both are removed
// from that namespace at the end. A manager started with the workspaces'
// namespaces removes a leftover ConfigMap in one at recovery.
func TestAWorkspacesPodsRunInItsNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{gpus: 8, run: true})
	team := e.c.Namespace(t)
	s := e.spec("trial-31.1", `echo "in $POD_NS"; exit 4`, []int{0}, e.nodes[0])
	s.Namespace = team
	launch(t, e.m, s)
	ctx := context.Background()
	pods, err := e.c.Client.CoreV1().Pods(team).List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=trial-31.1"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods in the workspace's namespace %s: %v, %v", team, pods, err)
	}
	if in, _ := e.c.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=trial-31.1"}); len(in.Items) != 0 {
		t.Errorf("a pod of the workspace went to the pool's namespace %s", e.ns)
	}
	if _, err := e.c.Client.CoreV1().ConfigMaps(team).Get(ctx, k8s.ObjectName("trial-31.1"), metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap is not in the workspace's namespace: %v", err)
	}
	e.events.started(t, s.AllocationID)
	e.events.line(t, s.AllocationID, "in ")
	if exit := e.events.exited(t, s.AllocationID); exit.ExitCode != 4 {
		t.Errorf("exit = %+v, want status 4", exit)
	}
	poll(t, "the ConfigMap and pod to be removed from the workspace's namespace", func() bool {
		cms, _ := e.c.Client.CoreV1().ConfigMaps(team).List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
		pods, _ := e.c.Client.CoreV1().Pods(team).List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
		return cms != nil && len(cms.Items) == 0 && pods != nil && len(pods.Items) == 0
	})

	// A ConfigMap left in the workspace's namespace by a master that died
	// between making it and its pods is removed by the next one's recovery.
	left := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k8s.ObjectName("trial-32.1"), Namespace: team,
		Labels: map[string]string{k8s.LabelAllocation: "trial-32.1", k8s.LabelAllocationID: "trial-32.1"}}}
	if _, err := e.c.Client.CoreV1().ConfigMaps(team).Create(ctx, left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: e.selector}}
	m, err := k8s.New(ctx, k8s.Options{Client: e.c.Client, Config: e.c.Config, Namespace: e.ns, WorkspaceNamespaces: []string{team},
		Pools: []k8s.Pool{{Name: "default", CPUPodSpec: spec, GPUPodSpec: spec}}, MaxSlotsPerPod: 8, SlotType: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if _, err := m.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	poll(t, "the leftover ConfigMap in the workspace's namespace to be removed", func() bool {
		_, err := e.c.Client.CoreV1().ConfigMaps(team).Get(ctx, left.Name, metav1.GetOptions{})
		return err != nil
	})
}
