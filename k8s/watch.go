package k8s

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/resolute-ml/resolute"
)

// ErrPodDeleted is the Exited error of an allocation whose pod was deleted
// by someone else before it ended.
var ErrPodDeleted = errors.New("a pod of the allocation was deleted before it ended")

// podChanged is the informers' handler for Resolute's pods.
func (m *Manager) podChanged(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	m.sync(p.Labels[LabelAllocationID])
}

// podState is what the pods of an allocation say, taken together.
type podState struct {
	allRunning bool
	allDone    bool   // every pod Succeeded, Failed or gone
	leaderDone bool   // the chief pod (the first) Succeeded or Failed
	failed     string // why the first pod that ended badly did, or ""
	exitCode   int    // that pod's exit status (0 when all succeeded)
	deleted    bool   // a pod is gone without having ended
	pending    bool   // a pod waits to be scheduled
	addr       string // the first pod's IP
	notes      []string
}

// observe sums up an allocation's pods; pods are by name, nil when gone.
func observe(places []podPlace, pods map[string]*corev1.Pod) podState {
	s := podState{allRunning: true, allDone: true}
	for i, pl := range places {
		p := pods[pl.name]
		if p == nil && !pl.seen { // created, but not in the cache yet
			s.allRunning, s.allDone, s.pending = false, false, true
			continue
		}
		if p == nil {
			s.deleted = true
			s.allRunning = false
			continue
		}
		if i == 0 {
			s.addr = p.Status.PodIP
		}
		s.notes = append(s.notes, podNotes(p)...)
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			s.allRunning = false
			s.leaderDone = s.leaderDone || i == 0
		case corev1.PodFailed:
			s.allRunning = false
			s.leaderDone = s.leaderDone || i == 0
			if s.failed == "" {
				s.exitCode, s.failed = exitOf(p)
			}
		case corev1.PodRunning:
			s.allDone = false
		default:
			s.allRunning, s.allDone = false, false
			if !scheduled(p) {
				s.pending = true
			}
		}
	}
	return s
}

// outcome is how an allocation ends, decided when its first pod ends (the
// other pods, deleted then, may end badly because of that).
type outcome struct {
	code int
	why  string // for the task log; "" when it succeeded
	err  error  // when the status is unknown
}

// outcomeOf is the end that pods in state s make: the status of a pod that
// failed, else of the chief when it ended, else a pod deleted by someone
// else.
func outcomeOf(s podState) outcome {
	switch {
	case s.failed != "":
		return outcome{code: s.exitCode, why: s.failed}
	case s.leaderDone:
		return outcome{}
	case s.deleted:
		return outcome{code: -1, why: ErrPodDeleted.Error(), err: ErrPodDeleted}
	}
	return outcome{}
}

// scheduled says whether a pod has a node.
func scheduled(p *corev1.Pod) bool {
	return p.Spec.NodeName != ""
}

// exitOf is a failed pod's task container's exit status and why it ended.
func exitOf(p *corev1.Pod) (int, string) {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == TaskContainerName && c.State.Terminated != nil {
			t := c.State.Terminated
			why := fmt.Sprintf("pod %s: exited with status %d", p.Name, t.ExitCode)
			if t.Reason != "" && t.Reason != "Error" && t.Reason != "Completed" {
				why += " (" + t.Reason + ")"
			}
			return int(t.ExitCode), why
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			return int(t.ExitCode), fmt.Sprintf("pod %s: init container %s exited with status %d", p.Name, c.Name, t.ExitCode)
		}
	}
	why := "pod " + p.Name + " failed"
	if p.Status.Reason != "" {
		why += ": " + p.Status.Reason
	}
	if p.Status.Message != "" {
		why += ": " + p.Status.Message
	}
	return -1, why
}

// podNotes are the things about a pod a person should read in the task log:
// an image that cannot be pulled, a container killed for memory, an
// eviction. Each comes with a key so it is written once.
func podNotes(p *corev1.Pod) []string {
	var notes []string
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, c := range statuses {
		if w := c.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				notes = append(notes, fmt.Sprintf("WARNING|pod %s, container %s: %s: %s", p.Name, c.Name, w.Reason, w.Message))
			}
		}
		if t := c.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			notes = append(notes, fmt.Sprintf("ERROR|pod %s, container %s was killed for using more memory than its limit (OOMKilled)", p.Name, c.Name))
		}
	}
	if p.Status.Reason == "Evicted" {
		notes = append(notes, fmt.Sprintf("ERROR|pod %s was evicted: %s", p.Name, p.Status.Message))
	}
	return notes
}

// podsOf is the current state of an allocation's pods, from the cache.
func (m *Manager) podsOf(a *allocation) map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	for _, pl := range a.pods {
		if p, err := m.pods.Pods(a.namespace).Get(pl.name); err == nil {
			out[pl.name] = p
		}
	}
	return out
}

// sync looks at an allocation's pods and moves it on: Started when every
// pod runs, the other pods deleted when one fails, Exited when all are done.
func (m *Manager) sync(id string) {
	m.mu.Lock()
	a, ok := m.allocs[id]
	if !ok || a.ended {
		m.mu.Unlock()
		return
	}
	pods := m.podsOf(a)
	for i := range a.pods {
		if pods[a.pods[i].name] != nil {
			a.pods[i].seen = true
		}
	}
	s := observe(a.pods, pods)
	var fresh []string
	for _, n := range s.notes {
		if !a.noted[n] {
			a.noted[n] = true
			fresh = append(fresh, n)
		}
	}
	start, stopping := false, false
	var startLogs func()
	if a.result == nil && !a.killed && (s.failed != "" || s.leaderDone || s.deleted) {
		o := outcomeOf(s)
		a.result = &o
		stopping = !s.allDone
	}
	switch {
	case s.allDone:
		a.ended = true
	case s.allRunning && !a.started:
		a.started, start = true, true
		startLogs = m.prepareLogs(a, nil)
	}
	ended, killed, result := a.ended, a.killed, a.result
	m.mu.Unlock()

	for _, n := range fresh {
		level, msg, _ := strings.Cut(n, "|")
		m.logLine(id, level, "kubernetes: "+msg)
	}
	if stopping {
		if result.why != "" {
			m.logLine(id, "ERROR", result.why+"; stopping the allocation's other pods")
		} else {
			m.logLine(id, "INFO", "the chief pod ended; stopping the allocation's other pods")
		}
		m.deleteObjects(m.ctx, a, 0)
	}
	switch {
	case ended:
		go m.finish(a, s, killed, result)
	case start:
		m.send(resolute.AllocationStarted{AllocationID: id, Addr: s.addr, Time: time.Now()})
		startLogs()
	}
}

// logWait bounds how long an ended allocation waits for its pods' log
// streams: ended containers' logs are whole and end at once, but a kubelet
// that took up a pod late is asked again for a few seconds.
const logWait = 10 * time.Second

// finish reports an allocation's end once its log streams are done (or a
// while has passed: logWait), and removes its ConfigMap.
func (m *Manager) finish(a *allocation, s podState, killed bool, result *outcome) {
	m.mu.Lock()
	unseen := !a.started && !s.deleted
	a.started = true
	var startLogs func()
	if unseen {
		startLogs = m.prepareLogs(a, nil)
	}
	m.mu.Unlock()
	if unseen {
		// It ran and ended between two looks: its output is still there.
		m.send(resolute.AllocationStarted{AllocationID: a.id, Addr: s.addr, Time: time.Now()})
		startLogs()
	}
	done := make(chan struct{})
	go func() { a.logs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(logWait):
	case <-m.ctx.Done():
		return
	}
	m.mu.Lock()
	stop := a.stopLogs
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
	o := outcomeOf(s)
	if result != nil {
		o = *result
	}
	e := resolute.AllocationExited{AllocationID: a.id, ExitCode: o.code, Err: o.err, Killed: killed, Time: time.Now()}
	if killed {
		e.ExitCode, e.Err = -1, nil
	} else if o.why != "" {
		m.logLine(a.id, "ERROR", o.why)
	}
	m.send(e)
	m.deleteObjects(m.ctx, a, 0) // finished pods hold nothing, but clutter
	m.deleteConfigMap(a)
	m.forget(a)
	m.log.Info("allocation ended", "allocation", a.id, "exit_code", e.ExitCode, "killed", killed)
}

// watchPending releases gangs whose pods wait past the pending timeout, so
// the scheduler can try again instead of holding slots someone else took.
func (m *Manager) watchPending() {
	defer m.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		var late []*allocation
		m.mu.Lock()
		for _, a := range m.allocs {
			if !a.started && !a.ended && !a.killed && time.Since(a.launched) > m.opts.PendingTimeout {
				late = append(late, a)
			}
		}
		m.mu.Unlock()
		for _, a := range late {
			m.mu.Lock()
			s := observe(a.pods, m.podsOf(a))
			if s.allRunning || s.allDone || a.ended || a.started {
				m.mu.Unlock()
				continue
			}
			a.ended = true
			m.mu.Unlock()
			why := fmt.Errorf("the allocation's pods stayed Pending for %s (the cluster's capacity was taken by other pods)", m.opts.PendingTimeout)
			if !s.pending {
				why = fmt.Errorf("the allocation's pods did not start within %s", m.opts.PendingTimeout)
			}
			m.deleteObjects(m.ctx, a, 0)
			m.deleteConfigMap(a)
			m.log.Warn("releasing a pending allocation", "allocation", a.id, "reason", why)
			m.send(resolute.AllocationExited{AllocationID: a.id, ExitCode: -1, Err: why, Requeue: s.pending, Time: time.Now()})
			m.forget(a)
		}
	}
}

// eventSeen copies Kubernetes' events about an allocation's pods
// (FailedScheduling, Pulling, BackOff, Evicted...) into its log, in words.
func (m *Manager) eventSeen(o any) {
	ev, ok := o.(*corev1.Event)
	if !ok || ev.InvolvedObject.Kind != "Pod" {
		return
	}
	pod, err := m.pods.Pods(ev.InvolvedObject.Namespace).Get(ev.InvolvedObject.Name)
	if err != nil {
		return // not one of Resolute's pods
	}
	id := pod.Labels[LabelAllocationID]
	key := "event|" + string(ev.UID) + "|" + fmt.Sprint(ev.Count)
	m.mu.Lock()
	a, ok := m.allocs[id]
	if !ok || a.ended || a.noted[key] {
		m.mu.Unlock()
		return
	}
	a.noted[key] = true
	m.mu.Unlock()
	level := "INFO"
	if ev.Type == corev1.EventTypeWarning {
		level = "WARNING"
	}
	m.logLine(id, level, fmt.Sprintf("kubernetes: pod %s: %s: %s", pod.Name, ev.Reason, ev.Message))
}

// prepareLogs readies following the task container's output of each pod
// into Log events (since the given time, or all of it); m.mu must be held,
// so that a finish waiting for the streams always sees them counted. The
// returned function starts them.
func (m *Manager) prepareLogs(a *allocation, since *metav1.Time) (start func()) {
	ctx, cancel := context.WithCancel(m.ctx)
	a.stopLogs = cancel
	names := make([]string, len(a.pods))
	for i, pl := range a.pods {
		names[i] = pl.name
	}
	a.logs.Add(len(names))
	return func() {
		for _, name := range names {
			go func() {
				defer a.logs.Done()
				m.followPod(ctx, a, name, since)
			}()
		}
	}
}

// followPod streams one pod's task container output until it ends.
func (m *Manager) followPod(ctx context.Context, a *allocation, pod string, since *metav1.Time) {
	req := m.logClient.CoreV1().Pods(a.namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: TaskContainerName, Follow: true, SinceTime: since})
	var stream io.ReadCloser
	var err error
	// The container may not be there yet: try again, less and less often,
	// for about a minute. "Not found" ends it only when the pod is gone.
	tries := 0
	for wait := 250 * time.Millisecond; wait < 20*time.Second; wait *= 2 {
		tries++
		stream, err = req.Stream(ctx)
		if err == nil || ctx.Err() != nil || apierrors.IsNotFound(err) && m.podGone(ctx, a.namespace, pod) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(wait, 4*time.Second)):
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("pod logs", "allocation", a.id, "pod", pod, "tries", tries, "err", err)
			m.logLine(a.id, "WARNING", fmt.Sprintf("kubernetes: the output of pod %s could not be read (%d tries): %v", pod, tries, err))
		}
		return
	}
	defer stream.Close()
	go func() { <-ctx.Done(); stream.Close() }()
	node := m.nodeOf(a, pod)
	r := bufio.NewReaderSize(stream, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			l := resolute.NewAllocationLog(a.id, "stdout", trimNewline(line), time.Now())
			l.Agent, l.Container = node, pod
			m.send(l)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return
		}
	}
}

// podGone says whether the API has no such pod any more. A log request's
// "not found" does not say so by itself: client-go names any 404 that way,
// and a kubelet answers 404 before it has taken up a pod that just started.
func (m *Manager) podGone(ctx context.Context, namespace, pod string) bool {
	_, err := m.logClient.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// nodeOf is the node a pod of a runs on, as the cache has it once the pod
// is placed (its output can be read then), else as Launch placed it.
func (m *Manager) nodeOf(a *allocation, pod string) string {
	if p, err := m.pods.Pods(a.namespace).Get(pod); err == nil && p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pl := range a.pods {
		if pl.name == pod {
			return pl.node
		}
	}
	return ""
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
