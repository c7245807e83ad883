package k8stest

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

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
			pr.finish(ctx)
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
		pr.finish(ctx)
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
func (pr *podRun) finish(ctx context.Context) {
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
