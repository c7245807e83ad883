package k8s

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/resolute-ml/resolute"
)

// NodeSlots is what one node offers Resolute.
type NodeSlots struct {
	Node string
	// Total is the node's slots: its allocatable nvidia.com/gpu, or its
	// allocatable CPU divided by the CPU of a slot.
	Total int
	// Foreign is how many of them pods not started by Resolute hold.
	Foreign int
	// Held are the slot ids Resolute's allocations hold, by allocation.
	Held map[string][]int
}

// SlotIDs are the ids the scheduler may use on the node: every id an
// allocation holds, and as many others (lowest first) as the node has left
// after the foreign pods and those allocations.
func (n NodeSlots) SlotIDs() []int {
	var ids []int
	held := map[int]bool{}
	for _, s := range n.Held {
		for _, id := range s {
			if !held[id] {
				held[id] = true
				ids = append(ids, id)
			}
		}
	}
	free := n.Total - n.Foreign - len(ids)
	for id := 0; free > 0; id++ {
		if !held[id] {
			ids = append(ids, id)
			free--
		}
	}
	sort.Ints(ids)
	return ids
}

// slotsOf is how many slots a request of resources amounts to: GPUs, or
// CPUs over cpuPerSlot, rounded up (a pod asking for part of a slot takes it
// all).
func slotsOf(l corev1.ResourceList, slotType string, cpuPerSlot resource.Quantity) int {
	if slotType == "cpu" {
		cpu, ok := l[corev1.ResourceCPU]
		if !ok || cpuPerSlot.IsZero() {
			return 0
		}
		per := cpuPerSlot.MilliValue()
		return int((cpu.MilliValue() + per - 1) / per)
	}
	gpu, ok := l[ResourceGPU]
	if !ok {
		return 0
	}
	return int(gpu.Value())
}

// totalSlots is a node's slots: allocatable GPUs, or allocatable CPU over
// cpuPerSlot rounded down.
func totalSlots(n *corev1.Node, slotType string, cpuPerSlot resource.Quantity) int {
	if slotType == "cpu" {
		cpu, ok := n.Status.Allocatable[corev1.ResourceCPU]
		if !ok || cpuPerSlot.IsZero() {
			return 0
		}
		return int(cpu.MilliValue() / cpuPerSlot.MilliValue())
	}
	gpu, ok := n.Status.Allocatable[ResourceGPU]
	if !ok {
		return 0
	}
	return int(gpu.Value())
}

// podRequests is what a pod asks for: the sum of its containers' requests,
// or the largest of its init containers' when that is more (as
// kube-scheduler counts them). Limits stand in for missing requests of
// extended resources.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	add := func(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		cur := l[name]
		cur.Add(q)
		l[name] = cur
	}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			add(sum, name, q)
		}
		if _, ok := c.Resources.Requests[ResourceGPU]; !ok {
			if q, ok := c.Resources.Limits[ResourceGPU]; ok {
				add(sum, ResourceGPU, q)
			}
		}
	}
	for _, c := range p.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur := sum[name]; q.Cmp(cur) > 0 {
				sum[name] = q
			}
		}
	}
	return sum
}

// eligible says whether a pool's pods may run on a node: it is
// schedulable, matches the pod spec's nodeSelector, and the pod spec
// tolerates its NoSchedule and NoExecute taints.
func eligible(n *corev1.Node, spec *corev1.Pod) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return false
		}
	}
	var sel map[string]string
	var tols []corev1.Toleration
	if spec != nil {
		sel, tols = spec.Spec.NodeSelector, spec.Spec.Tolerations
	}
	if len(sel) > 0 && !labels.SelectorFromSet(sel).Matches(labels.Set(n.Labels)) {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tols, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &t, false) }) {
			return false
		}
	}
	return true
}

// nodePodSpec is the pod spec that decides which nodes a pool's slots are
// on: its GPU pod spec for GPU slots, its CPU pod spec otherwise.
func (m *Manager) nodePodSpec(p Pool) *corev1.Pod {
	if m.opts.SlotType == "cpu" {
		return p.CPUPodSpec
	}
	return p.GPUPodSpec
}

// Nodes is every node with what it offers Resolute and which pool it is
// in (the first pool whose pod spec may run there; "" for none).
func (m *Manager) Nodes() ([]NodeSlots, map[string]string) {
	nodes, err := m.nodes.List(labels.Everything())
	if err != nil {
		return nil, nil
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	foreign := map[string]int{}
	pods, _ := m.otherPods.List(labels.Everything())
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			foreign[p.Spec.NodeName] += slotsOf(podRequests(p), m.opts.SlotType, m.opts.CPUPerSlot)
		}
	}
	held := m.held()
	out := make([]NodeSlots, 0, len(nodes))
	pools := map[string]string{}
	for _, n := range nodes {
		ns := NodeSlots{Node: n.Name, Total: totalSlots(n, m.opts.SlotType, m.opts.CPUPerSlot),
			Foreign: foreign[n.Name], Held: held[n.Name]}
		out = append(out, ns)
		for _, p := range m.opts.Pools {
			if eligible(n, m.nodePodSpec(p)) {
				pools[n.Name] = p.Name
				break
			}
		}
	}
	return out, pools
}

// held is, by node, the slots of each live allocation.
func (m *Manager) held() map[string]map[string][]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[string][]int{}
	for id, a := range m.allocs {
		if a.ended {
			continue
		}
		for _, p := range a.pods {
			if len(p.slots) == 0 {
				continue
			}
			if out[p.node] == nil {
				out[p.node] = map[string][]int{}
			}
			out[p.node][id] = append(out[p.node][id], p.slots...)
		}
	}
	return out
}

// Agents lists the nodes of a pool (every node for ""), each with its
// slots.
func (m *Manager) Agents(pool string) []resolute.Agent {
	nodes, pools := m.Nodes()
	out := make([]resolute.Agent, 0, len(nodes))
	for _, n := range nodes {
		if pool == "" || pools[n.Node] == pool {
			out = append(out, n.agent(pools[n.Node], m.SlotType()))
		}
	}
	return out
}

// agent is the node in pool with its slots: those an allocation holds, the
// others the scheduler may use (SlotIDs), and the rest, which pods Resolute
// did not start hold (Foreign).
func (n NodeSlots) agent(pool, device string) resolute.Agent {
	holder := map[int]string{}
	for id, slots := range n.Held {
		for _, s := range slots {
			holder[s] = id
		}
	}
	usable := n.SlotIDs()
	ids := slices.Clone(usable)
	for id := 0; id < n.Total; id++ {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	a := resolute.Agent{ID: n.Node, ResourcePool: pool}
	for _, id := range ids {
		a.Slots = append(a.Slots, resolute.Slot{ID: id, Device: device, Agent: n.Node, AllocationID: holder[id],
			Foreign: !slices.Contains(usable, id)})
	}
	return a
}

// TotalSlots is the slots of every node.
func (m *Manager) TotalSlots() int {
	nodes, _ := m.Nodes()
	total := 0
	for _, n := range nodes {
		total += n.Total
	}
	return total
}

// SlotType is the slots' device type: cuda or cpu.
func (m *Manager) SlotType() string {
	if m.opts.SlotType == "cpu" {
		return "cpu"
	}
	return "cuda"
}
