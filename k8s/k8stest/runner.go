package k8stest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// RunOptions says which pods RunPods runs and how.
type RunOptions struct {
	// Nodes are the nodes (from AddNodes) whose pods run; required.
	Nodes []string
	// PathMap rewrites absolute path prefixes in the pods' commands,
	// arguments, environment and working directories to local paths, like
	// the mount paths of their volumes: {"/opt/resolute/harness": dir}.
	PathMap map[string]string
	// Path is the processes' PATH (default the test process's).
	Path string
	// Env is added to every process's environment, before the pod's own.
	Env map[string]string
}

// runnerAnnotation marks the pods a runner runs: kwok leaves their deletion
// to the runner (see scripts/k8s-kwok.yaml).
const runnerAnnotation = "k8stest.resolute.ai/runner"

// mainContainer is the container that runs a task; the runner runs it (or a
// pod's only container) after the init containers.
const mainContainer = "determined-container"

var (
	logsResource  = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}
	execsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}
)

// RunPods runs the pods bound to opts.Nodes as local processes until the
// test ends, as their kubelet would:
//
//   - each pod gets a root directory R; a configMap or secret volume becomes
//     a directory with its keys as files, an emptyDir an empty directory, a
//     hostPath the path itself, each linked at R+mountPath;
//   - the init containers run in order, then the container named
//     determined-container (or the only one), each as a process group with
//     argv command+args, its working directory and environment (literal
//     values, $(VAR) references, fieldRefs, configMap and secret keys), every
//     mount path and opts.PathMap prefix rewritten to its local path;
//   - their output goes to CRI log files that kwok serves, so `kubectl logs`
//     and Pods(ns).GetLogs (Follow included: it ends when the process does)
//     return it, and `kubectl exec` runs commands in the working directory
//     of the pod's main container with its environment;
//   - when the main container (or a failing init container) exits, the pod
//     becomes Succeeded or Failed with the container's exit code in
//     status.containerStatuses[].state.terminated;
//   - when the pod is deleted, its processes get SIGTERM, SIGKILL after the
//     grace period, and then the pod goes.
//
// Pods become Running (and get their IPs from kwok) as soon as they are
// bound, before their init containers end. Restart policies other than
// Never are not honoured, nor resource limits.
func (c *Cluster) RunPods(t testing.TB, opts RunOptions) {
	t.Helper()
	if len(opts.Nodes) == 0 {
		t.Fatal("k8stest: RunPods needs nodes")
	}
	if opts.Path == "" {
		opts.Path = os.Getenv("PATH")
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{
		t:      t,
		c:      c,
		opts:   opts,
		id:     hex.EncodeToString(id),
		root:   t.TempDir(),
		nodes:  map[string]bool{},
		pods:   map[types.UID]*podRun{},
		ctx:    ctx,
		cancel: cancel,
	}
	for _, n := range opts.Nodes {
		r.nodes[n] = true
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.sync(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { r.sync(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.gone(pod)
			}
		},
	})
	if err != nil {
		t.Fatalf("k8stest: watching pods: %v", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("k8stest: the pod runner's informer did not sync")
	}
	t.Cleanup(r.stop)
}

type runner struct {
	t      testing.TB
	c      *Cluster
	opts   RunOptions
	id     string
	root   string
	nodes  map[string]bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	pods map[types.UID]*podRun
}

func (r *runner) logf(format string, args ...any) {
	// t.Logf panics once the test is over; the runner's goroutines may
	// still be winding down then.
	if r.ctx.Err() == nil {
		r.t.Logf("k8stest runner: "+format, args...)
	}
}

// sync hands a pod event to the pod's run, starting one for a pod it has
// not seen that is still to run.
func (r *runner) sync(pod *corev1.Pod) {
	if !r.nodes[pod.Spec.NodeName] || r.ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	pr := r.pods[pod.UID]
	if pr == nil {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			r.mu.Unlock()
			return
		}
		pr = &podRun{
			r:       r,
			ns:      pod.Namespace,
			name:    pod.Name,
			uid:     pod.UID,
			dir:     filepath.Join(r.root, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)[:8]),
			changed: make(chan struct{}, 1),
			term:    make(chan struct{}),
		}
		r.pods[pod.UID] = pr
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			pr.run()
		}()
	}
	r.mu.Unlock()
	pr.update(pod)
}

// gone handles a pod's disappearance: its processes stop at once.
func (r *runner) gone(pod *corev1.Pod) {
	r.mu.Lock()
	pr := r.pods[pod.UID]
	r.mu.Unlock()
	if pr != nil {
		pr.markGone()
		pr.terminate(time.Second)
	}
}

// stop kills every process, waits for the pods' runs to end and hands the
// pods left back to kwok.
func (r *runner) stop() {
	r.cancel()
	r.mu.Lock()
	var runs []*podRun
	for _, pr := range r.pods {
		runs = append(runs, pr)
	}
	r.mu.Unlock()
	for _, pr := range runs {
		pr.terminate(time.Second)
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		fmt.Fprintln(os.Stderr, "k8stest runner: pods still running 15s after the test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	patch := []byte(`{"metadata":{"annotations":{"` + runnerAnnotation + `":null}}}`)
	for _, pr := range runs {
		if !pr.isGone() {
			_, _ = r.c.Client.CoreV1().Pods(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
		pr.deleteKwokObjects(ctx)
	}
}

// podRun runs one pod.
type podRun struct {
	r        *runner
	ns, name string
	uid      types.UID
	dir      string // the pod's files: rootfs/, volumes/, logs/

	changed chan struct{} // an update arrived
	term    chan struct{} // closed when the pod is to stop

	mu          sync.Mutex
	pod         *corev1.Pod // the latest seen
	terminating bool
	gone        bool
	proc        *os.Process // the running process, if any
	killTimer   *time.Timer
	kwokObjects map[schema.GroupVersionResource]types.UID // the Logs and Exec made for the pod
}

func (pr *podRun) update(pod *corev1.Pod) {
	pr.mu.Lock()
	pr.pod = pod
	pr.mu.Unlock()
	select {
	case pr.changed <- struct{}{}:
	default:
	}
	if pod.DeletionTimestamp != nil {
		grace := 30 * time.Second
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		pr.terminate(grace)
	}
}

func (pr *podRun) latest() *corev1.Pod {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.pod
}

func (pr *podRun) markGone() {
	pr.mu.Lock()
	pr.gone = true
	pr.mu.Unlock()
}

func (pr *podRun) isGone() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.gone
}

func (pr *podRun) stopping() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.terminating
}

// terminate stops the pod: SIGTERM to the running process group now, SIGKILL
// after grace; no further container starts.
func (pr *podRun) terminate(grace time.Duration) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.terminating {
		pr.terminating = true
		close(pr.term)
	}
	if pr.proc == nil {
		return
	}
	pid := pr.proc.Pid
	if pr.killTimer == nil {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		pr.killTimer = time.AfterFunc(grace, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	} else if grace < time.Second {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// setProc records the running process; one that starts after the pod was
// told to stop gets SIGTERM at once.
func (pr *podRun) setProc(p *os.Process) {
	pr.mu.Lock()
	pr.proc = p
	pr.killTimer = nil
	terminating := pr.terminating
	pr.mu.Unlock()
	if terminating && p != nil {
		pr.terminate(2 * time.Second)
	}
}

func (pr *podRun) clearProc() {
	pr.mu.Lock()
	if pr.killTimer != nil {
		pr.killTimer.Stop()
	}
	pr.proc, pr.killTimer = nil, nil
	pr.mu.Unlock()
}

// run is the pod's life: prepare, wait for kwok to make it Running, run the
// containers, report, then wait for deletion and finish it.
func (pr *podRun) run() {
	r := pr.r
	ctx := r.ctx
	pod := pr.latest()
	if err := pr.annotate(ctx); err != nil {
		if !apierrors.IsNotFound(err) {
			r.logf("pod %s/%s: %v", pr.ns, pr.name, err)
		}
		return
	}
	main := pickMain(pod)
	var ran []*corev1.Container
	for i := range pod.Spec.InitContainers {
		ran = append(ran, &pod.Spec.InitContainers[i])
	}
	if main != nil {
		ran = append(ran, main)
	}
	if err := pr.createLogs(ctx, ran); err != nil {
		r.logf("pod %s/%s: kwok logs: %v", pr.ns, pr.name, err)
	}

	// Wait for kwok to make the pod Running: its IP is part of the
	// environment, and a later status from kwok must not overwrite ours.
	for pod = pr.latest(); pod.Status.PodIP == "" || pod.Status.Phase != corev1.PodRunning; pod = pr.latest() {
		select {
		case <-pr.changed:
		case <-pr.term:
			pr.finish(ctx, false)
			return
		case <-ctx.Done():
			return
		}
	}

	var initStatuses []corev1.ContainerStatus
	var mainStatus *corev1.ContainerStatus
	failed := false
	err := pr.prepareVolumes(ctx, pod)
	if err != nil {
		r.logf("pod %s/%s: volumes: %v", pr.ns, pr.name, err)
		failed = true
	}
	for i := 0; !failed && i < len(pod.Spec.InitContainers); i++ {
		if pr.stopping() || ctx.Err() != nil {
			break
		}
		st := pr.runContainer(ctx, pod, &pod.Spec.InitContainers[i], false)
		initStatuses = append(initStatuses, st)
		failed = st.State.Terminated.ExitCode != 0
	}
	if !failed && main != nil && !pr.stopping() && ctx.Err() == nil {
		st := pr.runContainer(ctx, pod, main, true)
		mainStatus = &st
		failed = st.State.Terminated.ExitCode != 0
	}
	if main == nil {
		r.logf("pod %s/%s: no container to run", pr.ns, pr.name)
		failed = true
	}
	if ctx.Err() != nil {
		return
	}
	if err := pr.report(ctx, initStatuses, mainStatus, failed); err != nil && !apierrors.IsNotFound(err) {
		r.logf("pod %s/%s: reporting status: %v", pr.ns, pr.name, err)
	}
	select {
	case <-pr.term:
		pr.finish(ctx, true)
	case <-ctx.Done():
	}
}

// pickMain is the container the runner runs after the init containers.
func pickMain(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == mainContainer {
			return &pod.Spec.Containers[i]
		}
	}
	if len(pod.Spec.Containers) == 1 {
		return &pod.Spec.Containers[0]
	}
	return nil
}

func (pr *podRun) annotate(ctx context.Context) error {
	patch := []byte(`{"metadata":{"annotations":{"` + runnerAnnotation + `":"` + pr.r.id + `"}}}`)
	_, err := pr.r.c.Client.CoreV1().Pods(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// finish deletes a pod that was to be deleted, now that its processes are
// gone, with the kwok objects that served its logs and exec.
func (pr *podRun) finish(ctx context.Context, _ bool) {
	c := pr.r.c
	if !pr.isGone() {
		zero := int64(0)
		err := c.Client.CoreV1().Pods(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &pr.uid},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			pr.r.logf("pod %s/%s: deleting: %v", pr.ns, pr.name, err)
		}
	}
	pr.deleteKwokObjects(ctx)
}

// report sets the pod's final status.
func (pr *podRun) report(ctx context.Context, inits []corev1.ContainerStatus, main *corev1.ContainerStatus, failed bool) error {
	pods := pr.r.c.Client.CoreV1().Pods(pr.ns)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, pr.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != pr.uid {
			return nil
		}
		now := metav1.Now()
		pod.Status.Phase = corev1.PodSucceeded
		if failed {
			pod.Status.Phase = corev1.PodFailed
		}
		for i := range pod.Status.Conditions {
			cond := &pod.Status.Conditions[i]
			if cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady {
				cond.Status, cond.Reason, cond.LastTransitionTime = corev1.ConditionFalse, "PodCompleted", now
			}
		}
		for _, st := range inits {
			setStatus(&pod.Status.InitContainerStatuses, st)
		}
		statuses := pod.Status.ContainerStatuses
		for i := range statuses {
			if main != nil && statuses[i].Name == main.Name {
				continue
			}
			switch {
			case main == nil && failed:
				// An init container failed: the pod's containers never
				// started (kwok had reported them running).
				statuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
			case statuses[i].State.Terminated == nil:
				// Containers the runner does not run end with the pod.
				statuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now,
				}}
			}
			statuses[i].Ready, statuses[i].Started = false, new(false)
		}
		if main != nil {
			setStatus(&pod.Status.ContainerStatuses, *main)
		}
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

func setStatus(list *[]corev1.ContainerStatus, st corev1.ContainerStatus) {
	for i := range *list {
		if (*list)[i].Name == st.Name {
			st.Image, st.ImageID = (*list)[i].Image, (*list)[i].ImageID
			(*list)[i] = st
			return
		}
	}
	*list = append(*list, st)
}

// createLogs points kwok's logs of the pod at the runner's log files.
func (pr *podRun) createLogs(ctx context.Context, containers []*corev1.Container) error {
	if err := os.MkdirAll(filepath.Join(pr.dir, "logs"), 0o755); err != nil {
		return err
	}
	var logs []any
	for _, ctr := range containers {
		path := pr.logPath(ctr.Name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		logs = append(logs, map[string]any{"containers": []any{ctr.Name}, "logsFile": path, "follow": true})
	}
	return pr.apply(ctx, logsResource, "Logs", map[string]any{"logs": logs})
}

// createExec lets `kubectl exec` into the pod run commands locally in dir
// with env.
func (pr *podRun) createExec(ctx context.Context, dir string, env []string) error {
	var envs []any
	for _, kv := range env {
		for i := range len(kv) {
			if kv[i] == '=' {
				envs = append(envs, map[string]any{"name": kv[:i], "value": kv[i+1:]})
				break
			}
		}
	}
	return pr.apply(ctx, execsResource, "Exec", map[string]any{
		"execs": []any{map[string]any{"local": map[string]any{"workDir": dir, "envs": envs}}},
	})
}

// apply creates or replaces the kwok object of the pod's name.
func (pr *podRun) apply(ctx context.Context, gvr schema.GroupVersionResource, kind string, spec map[string]any) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"name": pr.name, "namespace": pr.ns},
		"spec":       spec,
	}}
	res := pr.r.c.dynamic.Resource(gvr).Namespace(pr.ns)
	made, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Left by an earlier pod of the name: a new object (a new UID) keeps
		// that pod's run from deleting this one.
		if err := res.Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		made, err = res.Create(ctx, obj, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	pr.mu.Lock()
	if pr.kwokObjects == nil {
		pr.kwokObjects = map[schema.GroupVersionResource]types.UID{}
	}
	pr.kwokObjects[gvr] = made.GetUID()
	pr.mu.Unlock()
	return nil
}

// deleteKwokObjects deletes the pod's Logs and Exec, unless a later pod of
// the same name has replaced them.
func (pr *podRun) deleteKwokObjects(ctx context.Context) {
	pr.mu.Lock()
	objects := pr.kwokObjects
	pr.kwokObjects = nil
	pr.mu.Unlock()
	for gvr, uid := range objects {
		_ = pr.r.c.dynamic.Resource(gvr).Namespace(pr.ns).Delete(ctx, pr.name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
}

func (pr *podRun) logPath(container string) string {
	return filepath.Join(pr.dir, "logs", container+".log")
}
