// Package kubernetes_test runs the master on the project's test Kubernetes
// control plane (k8s/k8stest): trials become pods on simulated GPU nodes,
// which the test runs as local processes.
package kubernetes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/k8s/k8stest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	k8stest.Stop()
	os.Exit(code)
}

// cluster is a test's nodes (2 × 4 GPUs, run as processes) and a master
// configured for Kubernetes on them.
type cluster struct {
	t     *testing.T
	c     *k8stest.Cluster
	ns    string
	nodes []string
	m     *mastertest.Master
	token string
}

// newCluster starts the master; rmConfig are more resource_manager keys (a
// max_slots_per_pod replaces the default 4).
func newCluster(t *testing.T, rmConfig ...string) *cluster {
	c := k8stest.Start(t)
	k := &cluster{t: t, c: c, ns: c.Namespace(t)}
	selector := map[string]string{"e2e.resolute.ai/test": k.ns}
	k.nodes = c.AddNodes(t, k8stest.NodeOptions{Count: 2, GPUs: 4, Labels: selector})
	c.RunPods(t, k8stest.RunOptions{Nodes: k.nodes})

	dir := t.TempDir()
	dbURL, _ := url.Parse(dbtest.NewURL(t))
	spec := fmt.Sprintf(`{spec: {nodeSelector: {e2e.resolute.ai/test: %s}}}`, k.ns)
	gcSpec := fmt.Sprintf(`{metadata: {labels: {%s: "true"}}, spec: {nodeSelector: {e2e.resolute.ai/test: %s}}}`, gcLabel, k.ns)
	conf := fmt.Sprintf(`
data_dir: %s
db: {host: %s, name: %s, ssl_mode: disable}
resource_manager:
  type: kubernetes
  kubeconfig: %s
  namespace: %s
  max_slots_per_pod: 4
  pending_timeout: 60
task_container_defaults:
  cpu_pod_spec: %s
  gpu_pod_spec: %s
  checkpoint_gc_pod_spec: %s
`, filepath.Join(dir, "data"), dbURL.Query().Get("host"), dbURL.Path[1:], c.Kubeconfig, k.ns, spec, spec, gcSpec)
	for _, extra := range rmConfig {
		if strings.HasPrefix(extra, "max_slots_per_pod:") {
			conf = strings.Replace(conf, "  max_slots_per_pod: 4\n", "  "+extra+"\n", 1)
			continue
		}
		conf = strings.Replace(conf, "  type: kubernetes\n", "  type: kubernetes\n  "+extra+"\n", 1)
	}
	confPath := filepath.Join(dir, "master.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	k.m = mastertest.New(t, mastertest.Build(t), "--config", confPath)
	k.m.Start()
	k.token = k.m.Login("admin")
	return k
}

// gcLabel marks the pods made from the test's checkpoint_gc_pod_spec.
const gcLabel = "e2e.resolute.ai/checkpoint-gc"

// pods lists Resolute's pods in the test's namespace.
func (k *cluster) pods() []corev1.Pod {
	list, err := k.c.Client.CoreV1().Pods(k.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
	if err != nil {
		k.t.Fatal(err)
	}
	return list.Items
}

func (k *cluster) create(config string) int64 {
	return k.m.CreateExperiment(k.token, config, mastertest.SlowTrial())
}

func (k *cluster) experiment(id int64) resolute.Experiment { return k.m.Experiment(k.token, id) }

func (k *cluster) waitDone(id int64, within time.Duration) resolute.Experiment {
	k.t.Helper()
	return k.m.WaitDone(k.token, id, within)
}

func (k *cluster) trials(id int64) []resolute.Trial { return k.m.Trials(k.token, id) }

const ashaConfig = `
name: asha on kubernetes
entrypoint: python3 train.py
resources: {slots_per_trial: 1}
hyperparameters:
  x: {type: double, minval: 0, maxval: 10}
  max_steps: 8
  validate_every: 2
  step_seconds: 0.05
searcher:
  name: adaptive_asha
  metric: loss
  max_trials: 4
  max_time: 8
  time_metric: batches
  divisor: 2
  max_rungs: 2
  max_concurrent_trials: 4
max_restarts: 0
`

// TestAnASHASearchRunsItsTrialsAsPodsWithLogsInTheUIAndAShellThroughExec
// is the Kubernetes issue's main path: an adaptive_asha experiment whose
// trials are pods on simulated GPU nodes, their logs on the trial page, and
// a shell whose terminal is the exec API.
func TestAnASHASearchRunsItsTrialsAsPodsWithLogsInTheUIAndAShellThroughExec(t *testing.T) {
	k := newCluster(t)
	seen := k.watchPods()
	id := k.create(ashaConfig)
	e := k.waitDone(id, 3*time.Minute)
	trials := k.trials(id)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s\n%s", e.State, k.m.Output(), k.m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", trials[0].ID), k.token))
	}
	if len(trials) != 4 {
		t.Errorf("%d trials, want 4", len(trials))
	}
	pods := seen()
	for _, tr := range trials {
		if _, ok := pods["trial-"+fmt.Sprint(tr.ID)]; !ok {
			t.Errorf("trial %d never had a pod; pods seen: %v", tr.ID, pods)
		}
	}
	for alloc, node := range pods {
		if node != k.nodes[0] && node != k.nodes[1] {
			t.Errorf("pod of %s ran on %q, not one of the test's nodes", alloc, node)
		}
	}
	// The trial page's log shows the harness's output, read from the pod.
	page := k.m.Get(fmt.Sprintf("/trials/%d/logs/lines?after=0", trials[0].ID), k.token)
	if !strings.Contains(page, "slow trial starting at step 0") {
		t.Errorf("trial log page shows no output of the trial:\n%.2000s", page)
	}
	for deadline := time.Now().Add(30 * time.Second); len(k.pods()) != 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("pods left after the experiment: %d", len(k.pods()))
			break
		}
	}

	// A shell: its terminal runs in the pod, through the exec API.
	var shell resolute.TaskResponse
	if code := k.m.Call("POST", "/api/v1/shells", k.token, map[string]any{}, &shell); code != 200 {
		t.Fatalf("start shell: %d", code)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var tr resolute.TaskResponse
		k.m.Call("GET", "/api/v1/tasks/"+shell.Task.ID, k.token, nil, &tr)
		if tr.Task.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell never became ready: %+v\n%s", tr.Task, k.m.Output())
		}
	}
	term := k.openTerm(shell.Task.ID)
	term.send("echo node=$DET_AGENT_ID task=$DET_TASK_ID\n")
	out := term.until(`node=\S+ task=shell-\d+`)
	if !strings.Contains(out, "node="+k.nodes[0]) && !strings.Contains(out, "node="+k.nodes[1]) {
		t.Errorf("the terminal is not in a pod on the test's nodes:\n%s", out)
	}

	// A TensorBoard over the experiment, reached through the proxy at its
	// pod's IP. tensorboard ships on PyPI only: a stand-in that serves on
	// the pod's IP alone (not loopback's 127.0.0.1) takes its place.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "tensorboard"), []byte(standInTensorBoard), 0o755); err != nil {
		t.Fatal(err)
	}
	var tb resolute.TaskResponse
	req := resolute.CreateTaskRequest{ExperimentIDs: []int64{id},
		Config: "environment: {environment_variables: [\"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin\"]}\n"}
	if code := k.m.Call("POST", "/api/v1/tensorboards", k.token, req, &tb); code != 200 {
		t.Fatalf("launch TensorBoard: %d", code)
	}
	task := k.waitTask(tb.Task.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("the TensorBoard never got ready (%s, %s):\n%s", task.State, task.EndReason, k.m.Get("/api/v1/tasks/"+task.ID+"/logs", k.token))
	}
	body := k.m.TaskGet(k.m.OpenTask(k.token, task.ID), "/proxy/"+task.ID+"/")
	if !strings.Contains(body, "stand-in TensorBoard on 127.") || !strings.Contains(body, "/experiment/") {
		t.Errorf("the proxy did not reach the TensorBoard's pod: %q", body)
	}
}

// standInTensorBoard takes TensorBoard's flags, prints its ready line and
// answers under --path_prefix with the pod's IP and its log directories.
const standInTensorBoard = `#!/usr/bin/python3
import argparse, http.server, os

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--host", default="")
p.add_argument("--path_prefix", default="")
p.add_argument("--logdir", default="")
p.add_argument("--logdir_spec", default="")
a, _ = p.parse_known_args()
ip = os.environ["DET_KUBERNETES_POD_IP"]

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ("stand-in TensorBoard on %s logdir=%s%s\n" % (ip, a.logdir, a.logdir_spec)).encode()
        self.send_response(200 if self.path.startswith(a.path_prefix + "/") else 404)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer((ip, a.port), Handler)
print("TensorBoard 2.x at http://%s:%d%s/ (Press CTRL+C to quit)" % (ip, a.port, a.path_prefix), flush=True)
srv.serve_forever()
`

func (k *cluster) waitTask(id string, ok func(resolute.Task) bool) resolute.Task {
	k.t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var tr resolute.TaskResponse
		k.m.Call("GET", "/api/v1/tasks/"+id, k.token, nil, &tr)
		if ok(tr.Task) || time.Now().After(deadline) {
			return tr.Task
		}
	}
}

// TestAFailedPodRestartsTheTrialPerMaxRestarts fails a trial's first run:
// its pod fails, and a second allocation (new pods) finishes the trial.
func TestAFailedPodRestartsTheTrialPerMaxRestarts(t *testing.T) {
	k := newCluster(t)
	conf := strings.NewReplacer("max_trials: 4", "max_trials: 1", "adaptive_asha", "random", "max_concurrent_trials: 4", "max_concurrent_trials: 1",
		"max_restarts: 0", "max_restarts: 1",
		"entrypoint: python3 train.py", `entrypoint: 'if [ "$DET_TRIAL_RUN_ID" = 1 ]; then echo first run fails; exit 9; fi; exec python3 train.py'`).Replace(ashaConfig)
	conf = strings.Replace(conf, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 8}\n", 1)
	id := k.create(conf)
	e := k.waitDone(id, 2*time.Minute)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s", e.State, k.m.Output())
	}
	tr := k.trials(id)[0]
	logs := k.m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", tr.ID), k.token)
	if tr.Restarts != 1 || !strings.Contains(logs, "first run fails") || !strings.Contains(logs, "exited with status 9") {
		t.Errorf("restarts = %d; logs:\n%s", tr.Restarts, logs)
	}
}

// TestAHigherPriorityExperimentPreemptsALowerOneOnKubernetes: on
// Kubernetes a higher priority number runs first; with preemption on, the
// running low-priority trial checkpoints and gives its pods back, and
// resumes from its checkpoint once the high-priority one is done.
func TestAHigherPriorityExperimentPreemptsALowerOneOnKubernetes(t *testing.T) {
	k := newCluster(t, "scheduler: {type: priority, preemption: true}")
	base := strings.NewReplacer("slots_per_trial: 1", "slots_per_trial: 8", "max_trials: 4", "max_trials: 1",
		"entrypoint: python3 train.py", `entrypoint: 'if [ "$RESOLUTE_POD_INDEX" = 0 ]; then exec python3 train.py; else exec sleep 600; fi'`,
		"adaptive_asha", "random", "max_concurrent_trials: 4", "max_concurrent_trials: 1").Replace(ashaConfig)
	base = strings.Replace(base, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 24}\n", 1)
	low := strings.NewReplacer("max_steps: 8", "max_steps: 24", "step_seconds: 0.05", "step_seconds: 0.4").Replace(base) + "resources: {priority: 10}\n"
	high := strings.Replace(base, "max_length: {batches: 24}", "max_length: {batches: 8}", 1) + "resources: {priority: 90}\n"
	low = strings.Replace(low, "resources: {slots_per_trial: 8}\n", "", 1)
	high = strings.Replace(high, "resources: {slots_per_trial: 8}\n", "", 1)
	low = strings.Replace(low, "resources: {priority: 10}", "resources: {slots_per_trial: 8, priority: 10}", 1)
	high = strings.Replace(high, "resources: {priority: 90}", "resources: {slots_per_trial: 8, priority: 90}", 1)
	a := k.create(low)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if len(k.m.Validations(k.token, a)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the low-priority trial never reported\n%s", k.m.Output())
		}
	}
	b := k.create(high)
	eb := k.waitDone(b, 2*time.Minute)
	ea := k.experiment(a)
	if eb.State != resolute.StateCompleted || resolute.Terminal(ea.State) {
		t.Fatalf("high ended %s while low is %s: the high one should finish first\n%s", eb.State, ea.State, k.m.Output())
	}
	ea = k.waitDone(a, 2*time.Minute)
	if ea.State != resolute.StateCompleted {
		t.Fatalf("the preempted experiment ended %s\n%s", ea.State, k.m.Output())
	}
	logs := k.m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", k.trials(a)[0].ID), k.token)
	for _, want := range []string{"preempted by", "resuming from checkpoint"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the low-priority trial's log lacks %q:\n%s", want, logs)
		}
	}
}

// TestTwoExperimentsThatEachNeedTheWholeClusterRunOneAfterTheOther is the
// seeds' deadlock: on 8 GPUs, two experiments of 8-slot trials (two pods of
// 4 each) must not each start half a gang.
func TestTwoExperimentsThatEachNeedTheWholeClusterRunOneAfterTheOther(t *testing.T) {
	k := newCluster(t)
	conf := strings.NewReplacer("slots_per_trial: 1", "slots_per_trial: 8", "max_trials: 4", "max_trials: 1",
		// The scheduling is under test, not training: the chief trains alone.
		"entrypoint: python3 train.py", `entrypoint: 'if [ "$RESOLUTE_POD_INDEX" = 0 ]; then exec python3 train.py; else exec sleep 600; fi'`,
		"adaptive_asha", "random", "max_concurrent_trials: 4", "max_concurrent_trials: 1").Replace(ashaConfig)
	conf = strings.Replace(conf, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 8}\n", 1)
	conf = strings.Replace(conf, "step_seconds: 0.05", "step_seconds: 0.3", 1)
	var mu sync.Mutex
	maxPods := 0
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			n := 0
			for _, p := range k.pods() {
				// Trial pods: the first experiment's checkpoint GC pod may
				// run beside the second's gang.
				if p.Labels[k8s.LabelTaskType] == "TRIAL" && p.DeletionTimestamp == nil &&
					p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					n++
				}
			}
			mu.Lock()
			maxPods = max(maxPods, n)
			mu.Unlock()
		}
	}()
	a, b := k.create(conf), k.create(conf)
	ea, eb := k.waitDone(a, 2*time.Minute), k.waitDone(b, 90*time.Second)
	close(stop)
	if ea.State != resolute.StateCompleted || eb.State != resolute.StateCompleted {
		t.Fatalf("experiments ended %s and %s\n%s\ntrial log:\n%s", ea.State, eb.State, k.m.Output(),
			k.m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", k.trials(a)[0].ID), k.token))
	}
	mu.Lock()
	defer mu.Unlock()
	if maxPods > 2 {
		t.Errorf("%d trial pods at once: both gangs were started together", maxPods)
	}
	if len(k.trials(a)) != 1 || len(k.trials(b)) != 1 {
		t.Errorf("trials: %d and %d, want 1 each", len(k.trials(a)), len(k.trials(b)))
	}
}

// TestRestartingTheMasterLeavesRunningPodsUntouched stops the master while
// a trial's pod runs and starts it again: the pod is the same pod, and the
// trial finishes without a restart.
func TestRestartingTheMasterLeavesRunningPodsUntouched(t *testing.T) {
	k := newCluster(t)
	conf := strings.NewReplacer("max_trials: 4", "max_trials: 1", "adaptive_asha", "random", "max_concurrent_trials: 4", "max_concurrent_trials: 1",
		"step_seconds: 0.05", "step_seconds: 0.5", "max_steps: 8", "max_steps: 16").Replace(ashaConfig)
	conf = strings.Replace(conf, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 16}\n", 1)
	id := k.create(conf)
	var pod corev1.Pod
	deadline := time.Now().Add(time.Minute)
	for {
		if pods := k.pods(); len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning {
			pod = pods[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no running pod\n%s", k.m.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	k.m.Stop()
	time.Sleep(time.Second)
	if pods := k.pods(); len(pods) != 1 || pods[0].UID != pod.UID || pods[0].DeletionTimestamp != nil {
		t.Fatalf("with the master stopped, the pod changed: %+v", pods)
	}
	k.m.Start()
	e := k.waitDone(id, 2*time.Minute)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s", e.State, k.m.Output())
	}
	tr := k.trials(id)[0]
	if tr.Restarts != 0 {
		t.Errorf("the trial restarted %d times; the adopted pod should have finished it", tr.Restarts)
	}
	if !strings.Contains(k.m.Output(), "adopted allocation") {
		t.Errorf("the master did not say it adopted the allocation:\n%s", k.m.Output())
	}
}

// watchPods records the node of every allocation's first pod it sees, by
// task id, until the test asks.
func (k *cluster) watchPods() func() map[string]string {
	var mu sync.Mutex
	seen := map[string]string{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, p := range k.pods() {
				if p.Spec.NodeName != "" {
					mu.Lock()
					seen[p.Labels[k8s.LabelTaskID]] = p.Spec.NodeName
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() map[string]string {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// term is the test's end of a terminal websocket.
type term struct {
	t    *testing.T
	conn *websocket.Conn
	out  bytes.Buffer
}

// openTerm opens a terminal into a shell once its allocation runs.
func (k *cluster) openTerm(id string) *term {
	k.t.Helper()
	u := "ws" + strings.TrimPrefix(k.m.URL, "http") + "/tasks/" + id + "/terminal/ws"
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		conn, _, err := websocket.Dial(context.Background(), u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + k.token}}})
		if err != nil {
			k.t.Fatal(err)
		}
		conn.SetReadLimit(1 << 20)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		typ, data, err := conn.Read(ctx)
		cancel()
		if err != nil && time.Now().Before(deadline) {
			conn.CloseNow()
			continue
		}
		if err != nil {
			k.t.Fatalf("terminal: %v\n%s", err, k.m.Output())
		}
		tm := &term{t: k.t, conn: conn}
		if typ == websocket.MessageBinary {
			tm.out.Write(data)
		}
		k.t.Cleanup(func() { conn.CloseNow() })
		return tm
	}
}

func (w *term) send(s string) {
	w.t.Helper()
	if err := w.conn.Write(context.Background(), websocket.MessageBinary, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

func (w *term) until(re string) string {
	w.t.Helper()
	rx := regexp.MustCompile(re)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !rx.Match(w.out.Bytes()) {
		typ, data, err := w.conn.Read(ctx)
		if err != nil {
			w.t.Fatalf("waiting for %q: %v; output:\n%s", re, err, w.out.String())
		}
		if typ == websocket.MessageBinary {
			w.out.Write(data)
		}
	}
	return w.out.String()
}

// TestCheckpointGCRunsInAPodMadeFromTheGCPodSpec: on Kubernetes the master
// cannot reach the nodes' storage, so a CHECKPOINT_GC task deletes the
// checkpoints the policy does not keep, in a pod made from
// checkpoint_gc_pod_spec; once it exits 0 they are marked deleted.
func TestCheckpointGCRunsInAPodMadeFromTheGCPodSpec(t *testing.T) {
	k := newCluster(t)
	// A GC pod lives for a moment: watch, so that none goes unseen.
	var mu sync.Mutex
	gcPods := map[string]corev1.Pod{} // by name, with the node it was bound to
	w, err := k.c.Client.CoreV1().Pods(k.ns).Watch(context.Background(),
		metav1.ListOptions{LabelSelector: k8s.LabelTaskType + "=" + resolute.TaskCheckpointGC})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				mu.Lock()
				gcPods[p.Name] = *p
				mu.Unlock()
			}
		}
	}()

	conf := strings.NewReplacer("max_trials: 4", "max_trials: 1", "adaptive_asha", "random",
		"max_concurrent_trials: 4", "max_concurrent_trials: 1").Replace(ashaConfig)
	conf = strings.Replace(conf, "  max_time: 8\n  time_metric: batches\n  divisor: 2\n  max_rungs: 2\n", "  max_length: {batches: 8}\n", 1)
	conf += "checkpoint_storage: {save_experiment_best: 0, save_trial_best: 0, save_trial_latest: 1}\n"
	id := k.create(conf)
	if e := k.waitDone(id, 2*time.Minute); e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s", e.State, k.m.Output())
	}
	// Checkpoints at steps 2, 4, 6 and 8: only the latest stays, in the
	// database (the API lists the ones not deleted) and on disk.
	var cps resolute.CheckpointsResponse
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		k.m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d/checkpoints", id), k.token, nil, &cps)
		if len(cps.Checkpoints) == 1 && cps.Checkpoints[0].StepsCompleted == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints %+v, want the one at step 8 alone\n%s", cps.Checkpoints, k.m.Output())
		}
	}
	cfg, err := expconf.ParseExperiment(k.experiment(id).Config)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := cfg.CheckpointStorage.LocalDir()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 36 { // a checkpoint's UUID
			left = append(left, e.Name())
		}
	}
	if len(left) != 1 || left[0] != cps.Checkpoints[0].UUID {
		t.Errorf("checkpoint directories left in %s: %v, want only %s", dir, left, cps.Checkpoints[0].UUID)
	}

	var tasks resolute.TasksResponse
	k.m.Call("GET", "/api/v1/tasks?all=true", k.token, nil, &tasks)
	var gc []resolute.Task
	for _, task := range tasks.Tasks {
		if task.Type == resolute.TaskCheckpointGC {
			gc = append(gc, task)
		}
	}
	if len(gc) == 0 {
		t.Fatalf("no CHECKPOINT_GC task: %+v", tasks.Tasks)
	}
	for _, task := range gc {
		if task.State != resolute.TaskTerminated || task.ExitCode == nil || *task.ExitCode != 0 {
			t.Errorf("GC task %s: %s, exit %v", task.ID, task.State, task.ExitCode)
		}
		if logs := k.m.Get("/api/v1/tasks/"+task.ID+"/logs", k.token); !strings.Contains(logs, "checkpoints of experiment") {
			t.Errorf("GC task %s's log:\n%s", task.ID, logs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gcPods) == 0 {
		t.Fatal("no CHECKPOINT_GC pod was seen")
	}
	for name, p := range gcPods {
		if p.Labels[gcLabel] != "true" || (p.Spec.NodeName != k.nodes[0] && p.Spec.NodeName != k.nodes[1]) {
			t.Errorf("GC pod %s: labels %v on node %q: not made from checkpoint_gc_pod_spec", name, p.Labels, p.Spec.NodeName)
		}
		if p.Spec.PriorityClassName != k8s.SystemPriorityClass {
			t.Errorf("GC pod %s: priority class %q, want %s", name, p.Spec.PriorityClassName, k8s.SystemPriorityClass)
		}
	}
}

// distTrain trains nothing: it checks that the workers of every pod form one
// torch.distributed job and one DistributedContext, and the chief reports
// what they saw.
const distTrain = `import json, os
import torch
import torch.distributed as dist
import determined as det

dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
d = det.core.DistributedContext.from_torch_distributed()
info = det.get_cluster_info()
everyone = d.allgather({"rank": d.rank, "pod": info.container_rank, "addr": os.environ["DET_KUBERNETES_POD_IP"]})
print("worker", d.rank, "of", d.size, "on pod", info.container_rank, "sees", json.dumps(everyone), flush=True)
with det.core.init(distributed=d) as ctx:
    if d.rank == 0:
        pods = sorted({e["addr"] for e in everyone})
        ctx.train.report_validation_metrics(1, {"loss": 0.0, "sum": t.item(), "world": d.size, "pods": len(pods),
                                                "chief_first": 1.0 if everyone[0]["addr"] == info.container_addrs[0] else 0.0})
dist.destroy_process_group()
`

// TestATrialOfTwoPodsTrainsAsOneTorchDistributedJob runs a trial of two
// slots on pods of one slot each: the pods meet at the master's rendezvous,
// and determined.launch.torch_distributed starts torchrun on both with the
// chief pod as the rendezvous address, so the two workers all-reduce
// together. It needs PyTorch under /usr/bin/python3 (Debian's python3-torch).
func TestATrialOfTwoPodsTrainsAsOneTorchDistributedJob(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import torch.distributed").Run() != nil {
		t.Skip("PyTorch is not installed under /usr/bin/python3 (make test installs python3-torch)")
	}
	k := newCluster(t, "max_slots_per_pod: 1")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dist_train.py"), []byte(distTrain), 0o644); err != nil {
		t.Fatal(err)
	}
	// The pods are processes on this machine: gloo talks over loopback.
	conf := `
name: two pods, one job
entrypoint: /usr/bin/python3 -m determined.launch.torch_distributed /usr/bin/python3 dist_train.py
resources: {slots_per_trial: 2}
environment: {environment_variables: [GLOO_SOCKET_IFNAME=lo]}
searcher: {name: single, metric: loss, max_length: {batches: 1}}
max_restarts: 0
`
	id := k.m.CreateExperiment(k.token, conf, dir)
	e := k.waitDone(id, 3*time.Minute)
	trials := k.trials(id)
	logs := ""
	if len(trials) == 1 {
		logs = k.m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", trials[0].ID), k.token)
	}
	if e.State != resolute.StateCompleted || len(trials) != 1 {
		t.Fatalf("experiment ended %s with %d trials\n%s\ntrial log:\n%s", e.State, len(trials), k.m.Output(), logs)
	}
	for _, want := range []string{"rendezvous: pod 0 of 2", "rendezvous: pod 1 of 2", "rendezvous: all 2 pods ready"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the trial log lacks %q:\n%s", want, logs)
		}
	}
	var ms resolute.MetricsResponse
	k.m.Call("GET", fmt.Sprintf("/api/v1/trials/%d/metrics?group=validation", trials[0].ID), k.token, nil, &ms)
	if len(ms.Metrics) != 1 {
		t.Fatalf("validations %+v\n%s", ms.Metrics, logs)
	}
	var got map[string]any
	json.Unmarshal(ms.Metrics[0].Metrics, &got)
	avg, _ := got["avg_metrics"].(map[string]any)
	// Ranks 0 and 1 add 1 + 2; two workers on two pods; the chief's pod first.
	if avg["sum"] != 3.0 || avg["world"] != 2.0 || avg["pods"] != 2.0 || avg["chief_first"] != 1.0 {
		t.Errorf("the workers reported %v, want sum 3 from a world of 2 on 2 pods\n%s", got, logs)
	}
}
