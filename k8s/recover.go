package k8s

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
)

// Recover adopts the allocations whose pods survived a master restart: it
// lists Resolute's pods by label, keeps watching those still running (their
// logs resume from now), and reports the exit status of those that ended
// while no master ran. Pods of a gang that lost a member are deleted (the
// allocation is then not returned: control requeues it), and ConfigMaps of
// allocations that are not alive are removed. Nothing is started again.
func (m *Manager) Recover(ctx context.Context) ([]resolute.RecoveredAllocation, error) {
	var out []resolute.RecoveredAllocation
	alive := map[string]bool{}
	list, err := m.opts.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: LabelAllocation})
	if err != nil {
		return nil, err
	}
	groups := map[string][]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if id := p.Labels[LabelAllocationID]; id != "" {
			groups[id] = append(groups[id], p)
		}
	}
	now := metav1.NewTime(time.Now())
	for id, pods := range groups {
		sort.Slice(pods, func(i, j int) bool { return podIndex(pods[i].Name) < podIndex(pods[j].Name) })
		a := &allocation{id: id, namespace: pods[0].Namespace, launched: time.Now(), noted: map[string]bool{}}
		byName := map[string]*corev1.Pod{}
		for _, p := range pods {
			a.pods = append(a.pods, podPlace{name: p.Name, node: p.Spec.NodeName, slots: parseSlots(p.Annotations[AnnotationSlots]), seen: true})
			byName[p.Name] = p
		}
		complete := gangSize(pods[0]) == len(pods)
		s := observe(a.pods, byName)
		switch {
		case s.allDone && complete:
			out = append(out, resolute.RecoveredAllocation{AllocationID: id, ExitCode: outcomeOf(s).code})
			m.deleteObjects(ctx, a, 0)
		case s.failed != "" || !complete:
			m.log.Warn("deleting the pods of a broken gang", "allocation", id)
			m.deleteObjects(ctx, a, 0)
		default:
			a.started = s.allRunning
			m.mu.Lock()
			m.allocs[id] = a
			startLogs := func() {}
			if a.started {
				startLogs = m.prepareLogs(a, &now)
			}
			m.mu.Unlock()
			alive[id] = true
			out = append(out, resolute.RecoveredAllocation{AllocationID: id, Running: true})
			startLogs()
			m.log.Info("adopted allocation", "allocation", id, "pods", len(pods))
		}
	}
	for _, ns := range m.namespaces() {
		cms, err := m.opts.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelAllocation})
		if err != nil {
			return nil, err
		}
		for _, cm := range cms.Items {
			if id := cm.Labels[LabelAllocationID]; !alive[id] {
				m.log.Info("removing a leftover ConfigMap", "allocation", id, "namespace", ns)
				m.deleteConfigMap(&allocation{id: id, namespace: cm.Namespace})
			}
		}
	}
	return out, nil
}

// gangSize is how many pods an allocation has, as its pods' environment
// says (DET_KUBERNETES_JOB_PARALLELISM); 1 when it does not say.
func gangSize(p *corev1.Pod) int {
	for _, c := range p.Spec.Containers {
		if c.Name != TaskContainerName {
			continue
		}
		for _, e := range c.Env {
			if e.Name == "DET_KUBERNETES_JOB_PARALLELISM" {
				if n, err := strconv.Atoi(e.Value); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 1
}

// podIndex is the index at the end of a pod's name ("...-3").
func podIndex(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
	return n
}

// parseSlots reads the slots annotation "0,1,2".
func parseSlots(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}
