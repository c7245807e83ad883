package k8s_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/k8s/k8stest"
)

func TestMain(m *testing.M) { k8stest.Main(m) }

// env is one test's corner of the shared control plane: a namespace, nodes
// only its pods select, and a manager whose pools select them.
type env struct {
	c        *k8stest.Cluster
	ns       string
	nodes    []string
	selector map[string]string
	m        *k8s.Manager
	events   *eventLog
}

type envOptions struct {
	nodes, gpus int
	pending     time.Duration
	scheduler   string
	run         bool // run the pods as processes
	pools       func(def k8s.Pool) []k8s.Pool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	c := k8stest.Start(t)
	e := &env{c: c, ns: c.Namespace(t)}
	e.selector = map[string]string{"k8s.resolute.ai/test": e.ns}
	if o.nodes == 0 {
		o.nodes = 1
	}
	e.nodes = c.AddNodes(t, k8stest.NodeOptions{Count: o.nodes, GPUs: o.gpus, Labels: e.selector})
	if o.run {
		c.RunPods(t, k8stest.RunOptions{Nodes: e.nodes})
	}
	spec := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: e.selector}}
	def := k8s.Pool{Name: "default", CPUPodSpec: spec, GPUPodSpec: spec}
	pools := []k8s.Pool{def}
	if o.pools != nil {
		pools = o.pools(def)
	}
	e.m = e.manager(t, pools, o)
	return e
}

func (e *env) manager(t *testing.T, pools []k8s.Pool, o envOptions) *k8s.Manager {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := k8s.New(ctx, k8s.Options{Client: e.c.Client, Config: e.c.Config, Namespace: e.ns, Pools: pools,
		MaxSlotsPerPod: 8, SlotType: "gpu", DefaultScheduler: o.scheduler, PendingTimeout: o.pending,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e.events = collect(m)
	return m
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// eventLog gathers a manager's events for the test to wait on.
type eventLog struct {
	ch  chan resolute.AllocationEvent
	all []resolute.AllocationEvent
}

func collect(m *k8s.Manager) *eventLog {
	l := &eventLog{ch: make(chan resolute.AllocationEvent, 10000)}
	go func() {
		for e := range m.Events() {
			l.ch <- e
		}
	}()
	return l
}

// waitFor returns the first event of the allocation that ok accepts.
func (l *eventLog) waitFor(t *testing.T, id, what string, ok func(resolute.AllocationEvent) bool) resolute.AllocationEvent {
	t.Helper()
	for _, e := range l.all {
		if e.Allocation() == id && ok(e) {
			return e
		}
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e := <-l.ch:
			l.all = append(l.all, e)
			if e.Allocation() == id && ok(e) {
				return e
			}
		case <-timeout:
			t.Fatalf("allocation %s: no %s; events: %s", id, what, l.describe(id))
			return nil
		}
	}
}

func (l *eventLog) describe(id string) string {
	var b strings.Builder
	for _, e := range l.all {
		if e.Allocation() != id {
			continue
		}
		switch e := e.(type) {
		case resolute.AllocationLog:
			b.WriteString("\n  log: " + e.Line)
		case resolute.AllocationStarted:
			b.WriteString("\n  started at " + e.Addr)
		case resolute.AllocationExited:
			b.WriteString("\n  exited")
		}
	}
	return b.String()
}

func (l *eventLog) exited(t *testing.T, id string) resolute.AllocationExited {
	t.Helper()
	return l.waitFor(t, id, "exit", func(e resolute.AllocationEvent) bool {
		_, ok := e.(resolute.AllocationExited)
		return ok
	}).(resolute.AllocationExited)
}

func (l *eventLog) started(t *testing.T, id string) resolute.AllocationStarted {
	t.Helper()
	return l.waitFor(t, id, "start", func(e resolute.AllocationEvent) bool {
		_, ok := e.(resolute.AllocationStarted)
		return ok
	}).(resolute.AllocationStarted)
}

func (l *eventLog) line(t *testing.T, id, substr string) {
	t.Helper()
	l.waitFor(t, id, "log line containing "+substr, func(e resolute.AllocationEvent) bool {
		lg, ok := e.(resolute.AllocationLog)
		return ok && strings.Contains(lg.Line, substr)
	})
}

// spec is a launch of shell on slots of the env's nodes.
func (e *env) spec(id, shell string, slots []int, nodes ...string) resolute.LaunchSpec {
	s := resolute.LaunchSpec{AllocationID: id, TaskID: strings.Split(id, ".")[0], Shell: shell, TaskType: "TRIAL",
		User: "admin", Pool: "default", Image: "busybox", Env: map[string]string{"GREETING": "hello from the pod"},
		Files: map[string][]byte{"note.txt": []byte("a file from the master")}}
	for i, sl := range slots {
		s.Slots = append(s.Slots, sl)
		s.SlotAgents = append(s.SlotAgents, nodes[i%len(nodes)])
	}
	return s
}

func launch(t *testing.T, m *k8s.Manager, s resolute.LaunchSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Launch(ctx, s); err != nil {
		t.Fatalf("launch %s: %v", s.AllocationID, err)
	}
}

func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return ok(), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestATrialRunsAsAPodWithItsFilesEnvironmentAndExitStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{gpus: 8, run: true})
	s := e.spec("trial-1.1", `echo "$GREETING"; cat note.txt; echo; echo "slots $DET_SLOT_IDS on $DET_AGENT_ID"; exit 3`, []int{0, 1}, e.nodes[0])
	launch(t, e.m, s)
	started := e.events.started(t, s.AllocationID)
	if ip := net.ParseIP(started.Addr); ip == nil || !ip.IsLoopback() {
		t.Errorf("started at %q, want the pod's IP", started.Addr)
	}
	e.events.line(t, s.AllocationID, "hello from the pod")
	e.events.line(t, s.AllocationID, "a file from the master")
	e.events.line(t, s.AllocationID, "slots [0,1] on "+e.nodes[0])
	exit := e.events.exited(t, s.AllocationID)
	if exit.ExitCode != 3 || exit.Killed || exit.Requeue {
		t.Errorf("exit = %+v, want status 3", exit)
	}
	poll(t, "the ConfigMap and pods to be removed", func() bool {
		cms, _ := e.c.Client.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
		pods, _ := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
		return cms != nil && len(cms.Items) == 0 && pods != nil && len(pods.Items) == 0
	})
}

func TestAgentsCountEachNodesSlotsLessThoseOfOtherPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{nodes: 2, gpus: 8})
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"kubernetes.io/hostname": e.nodes[0]},
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{k8s.ResourceGPU: resource.MustParse("3")}}}}}}
	if _, err := e.c.Client.CoreV1().Pods(e.ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "node 0 to offer 5 slots and node 1 all 8", func() bool {
		got := map[string]int{}
		for _, a := range e.m.Agents("default") {
			got[a.ID] = len(usable(a))
		}
		return len(got) == 2 && got[e.nodes[0]] == 5 && got[e.nodes[1]] == 8
	})
	for _, a := range e.m.Agents("") {
		foreign := 0
		for _, s := range a.Slots {
			if s.Foreign {
				foreign++
			}
		}
		if a.ID == e.nodes[0] && (len(a.Slots) != 8 || foreign != 3 || a.ResourcePool != "default") {
			t.Errorf("cluster view of node 0: %d slots, %d held by other pods, pool %q; want 8, 3, default", len(a.Slots), foreign, a.ResourcePool)
		}
	}
	if n := e.m.Agents("other-pool"); len(n) != 0 {
		t.Errorf("a pool that does not exist has agents %v", n)
	}
}

func TestAGangOfTwoPodsSpansTwoNodesAndEndsTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{nodes: 2, gpus: 8, run: true})
	slots := make([]int, 16)
	agents := make([]string, 16)
	for i := range slots {
		slots[i], agents[i] = i%8, e.nodes[i/8]
	}
	s := e.spec("trial-2.1", `echo "pod $RESOLUTE_POD_INDEX on $DET_AGENT_ID of $DET_KUBERNETES_JOB_PARALLELISM"; if [ "$RESOLUTE_POD_INDEX" = 0 ]; then sleep 2; exit 0; fi; exec sleep 600`, nil)
	s.Slots, s.SlotAgents = slots, agents
	launch(t, e.m, s)
	pods, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods: %v, %v", pods, err)
	}
	for _, p := range pods.Items {
		if gpus := p.Spec.Containers[0].Resources.Limits[k8s.ResourceGPU]; gpus.Value() != 8 {
			t.Errorf("pod %s asks for %s GPUs, want 8", p.Name, gpus.String())
		}
	}
	e.events.line(t, s.AllocationID, "pod 0 on "+e.nodes[0]+" of 2")
	e.events.line(t, s.AllocationID, "pod 1 on "+e.nodes[1]+" of 2")
	// The chief's end ends the gang: the other pod is stopped, and the
	// allocation ends with the chief's status.
	if exit := e.events.exited(t, s.AllocationID); exit.ExitCode != 0 || exit.Err != nil {
		t.Errorf("exit = %+v", exit)
	}
	e.events.line(t, s.AllocationID, "the chief pod ended")
}

func TestOneFailedPodEndsTheWholeGang(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{nodes: 2, gpus: 8, run: true})
	s := e.spec("trial-3.1", `if [ "$DET_AGENT_ID" = "`+e.nodes[1]+`" ]; then echo failing; exit 7; fi; sleep 600`, nil)
	for i := range 16 {
		s.Slots = append(s.Slots, i%8)
		s.SlotAgents = append(s.SlotAgents, e.nodes[i/8])
	}
	launch(t, e.m, s)
	exit := e.events.exited(t, s.AllocationID)
	if exit.ExitCode != 7 || exit.Killed {
		t.Errorf("exit = %+v, want status 7 of the failed pod", exit)
	}
	e.events.line(t, s.AllocationID, "stopping the allocation's other pods")
}

func TestKillDeletesThePodsAndReportsTheAllocationKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{gpus: 8, run: true})
	s := e.spec("command-4.1", `echo sleeping; exec sleep 600`, nil)
	s.TaskType = "COMMAND"
	launch(t, e.m, s)
	e.events.line(t, s.AllocationID, "sleeping")
	if err := e.m.Kill(context.Background(), s.AllocationID, time.Second); err != nil {
		t.Fatal(err)
	}
	if exit := e.events.exited(t, s.AllocationID); !exit.Killed {
		t.Errorf("exit = %+v, want killed", exit)
	}
	if err := e.m.Kill(context.Background(), s.AllocationID, time.Second); resolute.ErrorCode(err) != resolute.ENotFound {
		t.Errorf("second kill: %v, want not found", err)
	}
}

// TestAGangStuckPendingIsReleasedForRequeueWithTheSchedulersReason: a gang
// whose pods stay Pending past resource_manager.pending_timeout (the
// manager's PendingTimeout) is released, saying why.
func TestAGangStuckPendingIsReleasedForRequeueWithTheSchedulersReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{gpus: 8, pending: 3 * time.Second})
	// Someone else takes the node's GPUs after the scheduler counted them.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "greedy"}, Spec: corev1.PodSpec{NodeName: e.nodes[0],
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{k8s.ResourceGPU: resource.MustParse("8")}}}}}}
	if _, err := e.c.Client.CoreV1().Pods(e.ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := e.spec("trial-5.1", "true", []int{0, 1, 2, 3}, e.nodes[0])
	launch(t, e.m, s)
	e.events.line(t, s.AllocationID, "FailedScheduling")
	exit := e.events.exited(t, s.AllocationID)
	if !exit.Requeue || exit.Err == nil || !strings.Contains(exit.Err.Error(), "Pending") {
		t.Errorf("exit = %+v, want a requeue for pods left Pending", exit)
	}
}

func TestExecRunsCommandsInTheTaskContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{run: true})
	s := e.spec("shell-6.1", `echo ready; exec sleep 600`, nil)
	s.TaskType = "SHELL"
	launch(t, e.m, s)
	e.events.line(t, s.AllocationID, "ready")
	stream, err := e.m.Exec(context.Background(), s.AllocationID, []string{"sh", "-c", "cat note.txt; echo; echo $GREETING; exit 4"}, false)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(stream)
	code, err := stream.Wait()
	if err != nil || code != 4 {
		t.Errorf("exit = %d, %v; want 4", code, err)
	}
	for _, want := range []string{"a file from the master", "hello from the pod"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if _, err := e.m.Exec(context.Background(), "shell-404.1", []string{"true"}, false); resolute.ErrorCode(err) != resolute.ENotFound {
		t.Errorf("exec into an unknown allocation: %v", err)
	}
}

func TestARestartedManagerAdoptsRunningPodsAndReportsEndedOnes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{gpus: 8, run: true})
	running := e.spec("trial-7.1", `echo up; exec sleep 600`, []int{0}, e.nodes[0])
	done := e.spec("trial-8.1", `echo down; sleep 2; exit 5`, []int{1}, e.nodes[0])
	launch(t, e.m, running)
	launch(t, e.m, done)
	e.events.line(t, running.AllocationID, "up")
	e.events.line(t, done.AllocationID, "down")
	e.m.Close() // the master stops; its pods do not
	poll(t, "the second pod to end while no master runs", func() bool {
		pods, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=" + done.AllocationID})
		return err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase == corev1.PodFailed
	})

	// A ConfigMap whose pods are gone is a leftover.
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "trial-99-1", Labels: map[string]string{
		k8s.LabelAllocation: "trial-99.1", k8s.LabelAllocationID: "trial-99.1"}}}
	if _, err := e.c.Client.CoreV1().ConfigMaps(e.ns).Create(context.Background(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, []k8s.Pool{{Name: "default", GPUPodSpec: &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: e.selector}}}}, envOptions{})
	found, err := m.Recover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// (Other tests' pods, in other namespaces, are found too.)
	byID := map[string]resolute.RecoveredAllocation{}
	for _, f := range found {
		byID[f.AllocationID] = f
	}
	if !byID[running.AllocationID].Running || byID[done.AllocationID] != (resolute.RecoveredAllocation{AllocationID: done.AllocationID, ExitCode: 5}) {
		t.Fatalf("Recover = %+v, want %s adopted and %s ended with status 5", found, running.AllocationID, done.AllocationID)
	}
	if _, err := e.c.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "trial-99-1", metav1.GetOptions{}); err == nil {
		t.Error("the leftover ConfigMap is still there")
	}
	if _, err := e.c.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), k8s.ObjectName(running.AllocationID), metav1.GetOptions{}); err != nil {
		t.Errorf("the adopted allocation's ConfigMap is gone: %v", err)
	}
	pods, _ := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=" + running.AllocationID})
	if len(pods.Items) != 1 || pods.Items[0].DeletionTimestamp != nil {
		t.Fatalf("the running pod was touched: %+v", pods.Items)
	}
	for _, a := range m.Agents("default") {
		if ids := usable(a); a.ID == e.nodes[0] && (len(ids) != 8 || a.Slots[0].AllocationID != running.AllocationID) {
			t.Errorf("node offers slot ids %v (slot 0 held by %q), want 0..7 with the adopted slot 0 among them", ids, a.Slots[0].AllocationID)
		}
	}
	if err := m.Kill(context.Background(), running.AllocationID, time.Second); err != nil {
		t.Fatalf("kill the adopted allocation: %v", err)
	}
	if exit := e.events.exited(t, running.AllocationID); !exit.Killed {
		t.Errorf("exit = %+v", exit)
	}
}

// usable are the ids of the slots of an agent that the scheduler may use.
func usable(a resolute.Agent) []int {
	var ids []int
	for _, s := range a.Slots {
		if !s.Foreign {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	second := c.Namespace(t)
	e := newEnv(t, envOptions{gpus: 8, scheduler: "coscheduler", pools: func(def k8s.Pool) []k8s.Pool {
		team := def
		team.Name, team.Namespace = "team", second
		return []k8s.Pool{def, team}
	}})
	user := map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "vision"}},
		"spec": map[string]any{
			"containers": []any{map[string]any{"name": "determined-container",
				"volumeMounts": []any{map[string]any{"name": "data", "mountPath": "/data"}}},
				map[string]any{"name": "sidecar", "image": "busybox", "command": []any{"sleep", "inf"}}},
			"volumes": []any{map[string]any{"name": "data", "hostPath": map[string]any{"path": "/tmp"}}},
		}}
	prio := 70
	cases := []struct {
		id, typ, pool string
		slots         int
		ns            string
		wantScheduler string
		wantClass     string
	}{
		{"trial-9.1", "TRIAL", "default", 4, e.ns, "coscheduler", "resolute-priority-70"},
		{"command-9.1", "COMMAND", "team", 1, second, "", "resolute-priority-70"},
		{"notebook-9.1", "NOTEBOOK", "default", 0, e.ns, "", "resolute-priority-70"},
		{"shell-9.1", "SHELL", "team", 0, second, "", "resolute-priority-70"},
		{"tensorboard-9.1", "TENSORBOARD", "default", 0, e.ns, "", "resolute-priority-70"},
	}
	for _, tc := range cases {
		s := e.spec(tc.id, "true", make([]int, tc.slots), e.nodes[0])
		s.TaskType, s.Pool, s.PodSpec, s.Priority = tc.typ, tc.pool, user, &prio
		s.RegistryAuth = &resolute.RegistryAuth{Username: "u", Password: "p", Email: "u@example.com", ServerAddress: "registry.example.com"}
		s.ForcePullImage = true
		launch(t, e.m, s)
		pods, err := c.Client.CoreV1().Pods(tc.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=" + tc.id})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("%s: pods %v, %v", tc.id, pods, err)
		}
		p := pods.Items[0]
		if p.Spec.SchedulerName != tc.wantScheduler && !(tc.wantScheduler == "" && p.Spec.SchedulerName == "default-scheduler") {
			t.Errorf("%s: schedulerName %q, want %q", tc.id, p.Spec.SchedulerName, tc.wantScheduler)
		}
		if p.Spec.PriorityClassName != tc.wantClass || p.Spec.Priority == nil || *p.Spec.Priority != 70 {
			t.Errorf("%s: priority class %q (%v), want %s = 70", tc.id, p.Spec.PriorityClassName, p.Spec.Priority, tc.wantClass)
		}
		if p.Labels["team"] != "vision" || p.Labels[k8s.LabelTaskType] != tc.typ || len(p.Spec.Containers) != 2 {
			t.Errorf("%s: labels %v, %d containers", tc.id, p.Labels, len(p.Spec.Containers))
		}
		if len(p.Spec.ImagePullSecrets) != 1 || p.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
			t.Errorf("%s: image pull secrets %v, policy %s", tc.id, p.Spec.ImagePullSecrets, p.Spec.Containers[0].ImagePullPolicy)
		} else if sec, err := c.Client.CoreV1().Secrets(tc.ns).Get(context.Background(), p.Spec.ImagePullSecrets[0].Name, metav1.GetOptions{}); err != nil ||
			sec.Type != corev1.SecretTypeDockerConfigJson || !strings.Contains(string(sec.Data[corev1.DockerConfigJsonKey]), "registry.example.com") ||
			!strings.Contains(string(sec.Data[corev1.DockerConfigJsonKey]), `"email":"u@example.com"`) {
			t.Errorf("%s: pull secret %+v, %v", tc.id, sec, err)
		}
	}
	if _, err := c.Client.CoreV1().ConfigMaps(second).Get(context.Background(), k8s.ObjectName("command-9.1"), metav1.GetOptions{}); err != nil {
		t.Errorf("the team pool's ConfigMap is not in its namespace: %v", err)
	}
}
