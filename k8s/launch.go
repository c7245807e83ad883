package k8s

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
)

// Launch creates an allocation's ConfigMap and pods on the nodes the
// scheduler chose (spec.SlotAgents). A configuration Kubernetes cannot run
// (slots not divisible by max_slots_per_pod, a bad pod_spec) is an EInvalid
// error.
func (m *Manager) Launch(ctx context.Context, spec resolute.LaunchSpec) error {
	spec = m.withHarness(spec)
	pool := m.pool(spec.Pool)
	nPods, perPod, err := PodLayout(len(spec.Slots), m.opts.MaxSlotsPerPod)
	if err != nil {
		return err
	}
	places, err := placePods(spec, nPods, perPod)
	if err != nil {
		return err
	}
	user, err := PodFromMap(spec.PodSpec)
	if err != nil {
		return resolute.Errorf(resolute.EInvalid, "environment.pod_spec: %v", err)
	}
	def := pool.CPUPodSpec
	if len(spec.Slots) > 0 && m.opts.SlotType == "gpu" {
		def = pool.GPUPodSpec
	}
	if spec.TaskType == resolute.TaskCheckpointGC && pool.GCPodSpec != nil {
		def = pool.GCPodSpec // else the CPU pod spec: GC needs no GPU
	}
	req := PodRequest{Spec: spec, TaskType: spec.TaskType, User: spec.User, Pool: pool.Name,
		Namespace: m.namespaceOf(spec, pool), Image: spec.Image, Slots: len(spec.Slots), MaxSlotsPerPod: m.opts.MaxSlotsPerPod,
		SlotType: m.opts.SlotType, CPUPerSlot: m.opts.CPUPerSlot, DefaultPodSpec: def, UserPodSpec: user,
		Priority: spec.Priority, DefaultScheduler: m.opts.DefaultScheduler, Rendezvous: m.harness != nil}
	for _, p := range places {
		req.Nodes = append(req.Nodes, p.node)
		req.PodSlots = append(req.PodSlots, p.slots)
	}
	if req.Image == "" {
		req.Image = DefaultImage
	}
	if req.Context, err = readContext(ctx, spec); err != nil {
		return err
	}
	if spec.RegistryAuth != nil {
		req.ImagePullSecret = ObjectName(spec.AllocationID) + "-registry"
	}
	cm, pods, warnings, err := BuildPods(req)
	if err != nil {
		return err
	}
	if spec.ForcePullImage {
		for _, p := range pods {
			container(p, TaskContainerName).ImagePullPolicy = corev1.PullAlways
		}
	}
	if spec.Priority != nil && (user == nil || user.Spec.PriorityClassName == "") {
		if err := m.ensurePriorityClass(ctx, PriorityClassName("", spec.TaskType, spec.Priority), int32(*spec.Priority)); err != nil {
			return fmt.Errorf("priority class for priority %d: %w", *spec.Priority, err)
		}
	}

	m.watchNamespace(req.Namespace)
	a := &allocation{id: spec.AllocationID, namespace: req.Namespace, pods: places, launched: time.Now(), noted: map[string]bool{}}
	for i := range a.pods {
		a.pods[i].name = pods[i].Name
	}
	m.mu.Lock()
	if old, ok := m.allocs[a.id]; ok && !old.ended {
		m.mu.Unlock()
		return resolute.Errorf(resolute.EConflict, "allocation %s is already running", a.id)
	}
	m.allocs[a.id] = a
	m.mu.Unlock()

	for _, w := range warnings {
		m.logLine(a.id, "WARNING", w)
	}
	if spec.RegistryAuth != nil {
		if err := m.createPullSecret(ctx, req.Namespace, req.ImagePullSecret, cm.Labels, *spec.RegistryAuth); err != nil {
			m.forget(a)
			return fmt.Errorf("image pull secret for environment.registry_auth: %w", err)
		}
	}
	cms := m.opts.Client.CoreV1().ConfigMaps(req.Namespace)
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // left by an earlier try of a requeued allocation
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		m.forget(a)
		return fmt.Errorf("create ConfigMap %s/%s: %w", req.Namespace, cm.Name, err)
	}
	for _, p := range pods {
		if err := m.createPod(ctx, p); err != nil {
			m.forget(a)
			m.deleteObjects(context.WithoutCancel(ctx), a, 0)
			return fmt.Errorf("create pod %s/%s: %w", req.Namespace, p.Name, err)
		}
	}
	m.log.Info("launched", "allocation", a.id, "namespace", req.Namespace, "pods", len(pods))
	return nil
}

// withHarness is spec with the harness among its files and first on its
// PYTHONPATH (its pods then meet at the rendezvous when there are several),
// and DET_RESOURCES_TYPE set; the caller's maps are not changed.
func (m *Manager) withHarness(spec resolute.LaunchSpec) resolute.LaunchSpec {
	spec.Env = maps.Clone(spec.Env)
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	spec.Env["DET_RESOURCES_TYPE"] = "k8s-pod"
	if m.harness == nil {
		return spec
	}
	files := maps.Clone(m.harness)
	maps.Copy(files, spec.Files)
	spec.Files = files
	spec.PythonPath = append([]string{harnessDir}, spec.PythonPath...)
	return spec
}

// createPod creates a pod; one of the same name left by an earlier try of
// a requeued allocation is deleted first.
func (m *Manager) createPod(ctx context.Context, p *corev1.Pod) error {
	pods := m.opts.Client.CoreV1().Pods(p.Namespace)
	for try := 0; ; try++ {
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) || try == 40 {
			return err
		}
		zero := int64(0)
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// DefaultImage is the task image when a config names none.
const DefaultImage = "python:3.11-slim"

// placePods splits an allocation's slots into its pods: perPod consecutive
// slots each, all on one node. Zero-slot tasks get one pod on no chosen node.
func placePods(spec resolute.LaunchSpec, nPods, perPod int) ([]podPlace, error) {
	if len(spec.Slots) == 0 {
		return []podPlace{{}}, nil
	}
	if len(spec.SlotAgents) != len(spec.Slots) {
		return nil, fmt.Errorf("k8s: %d slots but %d agents", len(spec.Slots), len(spec.SlotAgents))
	}
	places := make([]podPlace, nPods)
	for i := range places {
		lo, hi := i*perPod, (i+1)*perPod
		node := spec.SlotAgents[lo]
		for _, n := range spec.SlotAgents[lo:hi] {
			if n != node {
				return nil, resolute.Errorf(resolute.EInvalid,
					"a pod of %d slots would span nodes %s and %s: max_slots_per_pod (%d) does not divide the nodes' slots", perPod, node, n, perPod)
			}
		}
		places[i] = podPlace{node: node, slots: append([]int(nil), spec.Slots[lo:hi]...)}
	}
	return places, nil
}

// PodFromMap reads a pod spec of a config (a v1.Pod as plain YAML values).
func PodFromMap(m map[string]any) (*corev1.Pod, error) {
	if m == nil {
		return nil, nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var p corev1.Pod
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ensurePriorityClass makes a PriorityClass unless it exists.
func (m *Manager) ensurePriorityClass(ctx context.Context, name string, value int32) error {
	pcs := m.opts.Client.SchedulingV1().PriorityClasses()
	if _, err := pcs.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	}
	never := corev1.PreemptNever
	_, err := pcs.Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "resolute"}},
		Value:            value,
		PreemptionPolicy: &never,
		Description:      "Resolute tasks of priority " + strconv.Itoa(int(value)),
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Kill deletes an allocation's pods with the grace period (SIGTERM, then
// SIGKILL when it runs out); the allocation's Exited follows when they are
// gone.
func (m *Manager) Kill(ctx context.Context, id string, grace time.Duration) error {
	m.mu.Lock()
	a, ok := m.allocs[id]
	if !ok || a.ended {
		m.mu.Unlock()
		return resolute.Errorf(resolute.ENotFound, "allocation %s is not running", id)
	}
	a.killed = true
	m.mu.Unlock()
	m.deleteObjects(ctx, a, grace)
	m.sync(id)
	return nil
}

// deleteObjects deletes an allocation's pods (with the grace period) and
// its ConfigMap.
func (m *Manager) deleteObjects(ctx context.Context, a *allocation, grace time.Duration) {
	secs := int64(grace / time.Second)
	m.mu.Lock()
	names := make([]string, len(a.pods))
	for i, p := range a.pods {
		names[i] = p.name
	}
	m.mu.Unlock()
	for _, name := range names {
		err := m.opts.Client.CoreV1().Pods(a.namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &secs})
		if err != nil && !apierrors.IsNotFound(err) {
			m.log.Warn("delete pod", "allocation", a.id, "pod", name, "err", err)
		}
	}
}

// deleteConfigMap removes an allocation's ConfigMap (and image pull
// secret) once it has ended.
func (m *Manager) deleteConfigMap(a *allocation) {
	err := m.opts.Client.CoreV1().ConfigMaps(a.namespace).Delete(m.ctx, ObjectName(a.id), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		m.log.Warn("delete ConfigMap", "allocation", a.id, "err", err)
	}
	err = m.opts.Client.CoreV1().Secrets(a.namespace).Delete(m.ctx, ObjectName(a.id)+"-registry", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		m.log.Warn("delete image pull secret", "allocation", a.id, "err", err)
	}
}

// createPullSecret makes a kubernetes.io/dockerconfigjson Secret of a
// task's registry_auth (Docker Hub when it names no server).
func (m *Manager) createPullSecret(ctx context.Context, ns, name string, labels map[string]string, a resolute.RegistryAuth) error {
	server := a.ServerAddress
	if server == "" {
		server = "https://index.docker.io/v1/"
	}
	auth := a.Auth
	if auth == "" && a.Username != "" {
		auth = base64.StdEncoding.EncodeToString([]byte(a.Username + ":" + a.Password))
	}
	cfg, err := json.Marshal(map[string]any{"auths": map[string]any{server: map[string]string{
		"username": a.Username, "password": a.Password, "auth": auth, "email": a.Email}}})
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: cfg}}
	secrets := m.opts.Client.CoreV1().Secrets(ns)
	_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	}
	return err
}

// forget drops an allocation that did not launch, or has ended and been
// reported (unless a new launch of the same id took its place).
func (m *Manager) forget(a *allocation) {
	m.mu.Lock()
	if m.allocs[a.id] == a {
		delete(m.allocs, a.id)
	}
	m.mu.Unlock()
}
