package k8stest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
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
			pod:     pod, // before run starts: it reads the pod at once
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
