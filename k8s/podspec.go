package k8s

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/resolute-ml/resolute"
)

// Priority classes and schedulers Resolute's pods use.
const (
	// DefaultPriorityClass (value 50) is made by the Helm chart or the manager.
	DefaultPriorityClass = "determined-medium-priority"
	// SystemPriorityClass (value 1000000), made by the Helm chart or the
	// manager, is checkpoint GC pods' class, as in Determined.
	SystemPriorityClass = "determined-system-priority"
	// PriorityClassPrefix + N names the class of value N the manager creates
	// for resources.priority N.
	PriorityClassPrefix = "resolute-priority-"
	Coscheduler         = "coscheduler"
)

// rendezvousScript runs the task ("$@") once every pod of the allocation
// has posted its address to the master: the harness's rendezvous sets
// DET_CONTAINER_ADDRS and DET_CONTAINER_RANK, then execs the task.
const rendezvousScript = `exec "${DET_PYTHON_EXECUTABLE:-python3}" -m determined.exec.rendezvous -- "$@"`

// initScript unpacks the context, then the files (so that they win), into the
// work directory; an archive that is missing or empty is skipped.
const initScript = `set -e
for a in ` + ContextArchive + ` ` + FilesArchive + `; do
  if [ -s "` + ConfigMapDir + `/$a" ]; then
    tar -xzf "` + ConfigMapDir + `/$a" -C "` + WorkDir + `"
  fi
done
`

// envResolute are the variables Resolute sets in the task container itself;
// values for them in LaunchSpec.Env are dropped. CUDA_VISIBLE_DEVICES is
// dropped too: on Kubernetes the device plugin exposes only the pod's GPUs.
var envResolute = []string{"PYTHONPATH", "DET_AGENT_ID", "DET_KUBERNETES_POD_IP", "DET_SLOT_IDS",
	"DET_KUBERNETES_JOB_PARALLELISM", "RESOLUTE_POD_INDEX", "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}

// MergePodSpecs merges the user's pod spec over the default with Kubernetes
// strategic merge patch (corev1.Pod as the data struct: containers and
// volumes are merged by name, volumeMounts by mountPath, env by name); the
// user wins. Either may be nil; the result is a new pod.
func MergePodSpecs(def, user *corev1.Pod) (*corev1.Pod, error) {
	switch {
	case def == nil && user == nil:
		return &corev1.Pod{}, nil
	case def == nil:
		return user.DeepCopy(), nil
	case user == nil:
		return def.DeepCopy(), nil
	}
	original, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("k8s: default pod spec: %w", err)
	}
	patch, err := patchJSON(user)
	if err != nil {
		return nil, fmt.Errorf("k8s: pod_spec: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Pod{})
	if err != nil {
		return nil, resolute.Errorf(resolute.EInvalid, "pod_spec cannot be merged with the default pod spec: %v", err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("k8s: merged pod spec: %w", err)
	}
	return out, nil
}

// patchJSON is the user's pod as a patch. A Go struct cannot say "delete
// this", but its JSON has nulls for unset fields (spec.containers,
// metadata.creationTimestamp), which a patch reads as deletions; they go.
func patchJSON(p *corev1.Pod) ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return json.Marshal(dropNulls(m))
}

func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
			} else {
				v[k] = dropNulls(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = dropNulls(x)
		}
	}
	return v
}

// PriorityClassName is the class a pod gets: the pod spec's own
// priorityClassName wins; else SystemPriorityClass for checkpoint GC;
// else PriorityClassPrefix+N when resources.priority is N (the manager
// creates that class with value N); else DefaultPriorityClass.
func PriorityClassName(podSpecClass, taskType string, priority *int) string {
	switch {
	case podSpecClass != "":
		return podSpecClass
	case taskType == resolute.TaskCheckpointGC:
		return SystemPriorityClass
	case priority != nil:
		return PriorityClassPrefix + strconv.Itoa(*priority)
	}
	return DefaultPriorityClass
}

// prepareBase turns the merged pod spec into the pod every pod of the
// allocation is a copy of, with everything but the name, the slots and the
// node: Resolute's metadata, volumes, init container and task container.
func (r PodRequest) prepareBase(p *corev1.Pod, name string, labels map[string]string, pods, perPod int, w *warnings) {
	if p.Name != "" || p.GenerateName != "" {
		w.add("pod_spec: metadata.name is ignored: Resolute names the pods %s-<n>", name)
	}
	if p.Namespace != "" && p.Namespace != r.Namespace {
		w.add("pod_spec: metadata.namespace %q is ignored: the pods run in namespace %q (their workspace's, else resource pool %q's)",
			p.Namespace, r.Namespace, r.Pool)
	}
	meta := metav1.ObjectMeta{Namespace: r.Namespace, Labels: p.Labels, Annotations: p.Annotations}
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	for _, k := range sortedKeys(labels) {
		if v, ok := meta.Labels[k]; ok && v != labels[k] {
			w.add("pod_spec: label %s=%q is ignored: Resolute sets it to %q", k, v, labels[k])
		}
		meta.Labels[k] = labels[k]
	}
	meta.Annotations["kubectl.kubernetes.io/default-container"] = TaskContainerName
	s := &p.Spec

	// Gang scheduling: the coscheduler admits a pod only with its whole group.
	if r.DefaultScheduler == Coscheduler && r.TaskType == "TRIAL" && r.Slots > 0 {
		if s.SchedulerName == "" {
			s.SchedulerName = Coscheduler
		}
		if _, ok := meta.Labels[LabelPodGroupName]; !ok {
			meta.Labels[LabelPodGroupName] = name
		}
		if _, ok := meta.Labels[LabelPodGroupMinAvailable]; !ok {
			meta.Labels[LabelPodGroupMinAvailable] = strconv.Itoa(pods)
		}
	}
	// Of the user's metadata only labels and annotations are kept, and no status.
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	p.ObjectMeta = meta
	p.Status = corev1.PodStatus{}

	if s.RestartPolicy != "" && s.RestartPolicy != corev1.RestartPolicyNever {
		w.add("pod_spec: restartPolicy %s is ignored: Resolute's pods never restart", s.RestartPolicy)
	}
	s.RestartPolicy = corev1.RestartPolicyNever
	if s.HostNetwork {
		w.add("pod_spec: hostNetwork is ignored: host networking is set in the master configuration")
		s.HostNetwork = false
	}
	if s.NodeName != "" {
		w.add("pod_spec: nodeName %q is ignored: Resolute's scheduler picks the nodes", s.NodeName)
		s.NodeName = ""
	}
	// The API server fills priority from the class and rejects a pod whose
	// own value differs.
	s.Priority = nil
	s.PriorityClassName = PriorityClassName(s.PriorityClassName, r.TaskType, r.Priority)
	if r.ImagePullSecret != "" && !slices.Contains(s.ImagePullSecrets, corev1.LocalObjectReference{Name: r.ImagePullSecret}) {
		s.ImagePullSecrets = append(s.ImagePullSecrets, corev1.LocalObjectReference{Name: r.ImagePullSecret})
	}

	s.Volumes = slices.DeleteFunc(s.Volumes, func(v corev1.Volume) bool {
		if v.Name == configMapVolume || v.Name == workDirVolume {
			w.add("pod_spec: volume %s is ignored: the name is Resolute's", v.Name)
			return true
		}
		return false
	})
	s.Volumes = append(s.Volumes,
		corev1.Volume{Name: configMapVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
		corev1.Volume{Name: workDirVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	for i, m := range r.Spec.Mounts {
		create := corev1.HostPathDirectoryOrCreate // as Docker's bind mounts do
		s.Volumes = append(s.Volumes, corev1.Volume{Name: mountVolume(i),
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: m.HostPath, Type: &create}}})
	}

	s.InitContainers = slices.DeleteFunc(s.InitContainers, func(c corev1.Container) bool {
		if c.Name == InitContainerName {
			w.add("pod_spec: init container %s is ignored: the name is Resolute's", c.Name)
			return true
		}
		return false
	})
	// Like Determined, after the user's init containers: the work directory
	// is unpacked last, just before the task starts.
	s.InitContainers = append(s.InitContainers, corev1.Container{
		Name:       InitContainerName,
		Image:      r.Image,
		Command:    []string{"sh", "-c", initScript},
		WorkingDir: WorkDir,
		// As the task's user, so that the work directory's files are its.
		SecurityContext: r.linkedUser(nil),
		VolumeMounts: []corev1.VolumeMount{
			{Name: configMapVolume, MountPath: ConfigMapDir, ReadOnly: true},
			{Name: workDirVolume, MountPath: WorkDir},
		},
	})

	// The task container comes first, so that it is the default of kubectl
	// logs and exec even for tools that ignore the annotation.
	i := slices.IndexFunc(s.Containers, func(c corev1.Container) bool { return c.Name == TaskContainerName })
	c := corev1.Container{Name: TaskContainerName}
	if i >= 0 {
		c = s.Containers[i]
		s.Containers = slices.Delete(s.Containers, i, i+1)
	}
	r.taskContainer(&c, pods, perPod, w)
	applyContainer(s, &c, r.Spec.Container, w)
	s.Containers = slices.Insert(s.Containers, 0, c)
}

// taskContainer makes c, the user's determined-container or an empty one,
// run the task, keeping what users may configure.
func (r PodRequest) taskContainer(c *corev1.Container, pods, perPod int, w *warnings) {
	if c.Image != "" && c.Image != r.Image {
		w.add("pod_spec: the image of %s is ignored: set environment.image instead", TaskContainerName)
	}
	c.Image = r.Image
	if len(c.Command) > 0 || len(c.Args) > 0 {
		w.add("pod_spec: the command and args of %s are ignored: Resolute runs the task there", TaskContainerName)
	}
	if e := r.Spec.Entrypoint; len(e) > 0 {
		c.Command = slices.Clone(e)
		// A relative path is the task's file in the work directory.
		if strings.Contains(e[0], "/") && !path.IsAbs(e[0]) {
			c.Command[0] = path.Join(WorkDir, e[0])
		}
	} else {
		c.Command = []string{"sh", "-c", r.Spec.Shell}
	}
	if pods > 1 && r.Rendezvous {
		// The pods first meet at the master's rendezvous, so that each
		// knows where the others (the chief first) run.
		c.Command = append([]string{"sh", "-c", rendezvousScript, "rendezvous"}, c.Command...)
	}
	if r.Spec.StartupHook {
		// The context's startup-hook.sh runs first, in the work directory
		// the init container filled, before the rendezvous, as in
		// Determined: the pods meet once each is ready to run.
		c.Command = resolute.WithStartupHook(c.Command)
	}
	c.Args = nil
	if c.WorkingDir != "" && c.WorkingDir != WorkDir {
		w.add("pod_spec: workingDir %q of %s is ignored: tasks run in %s", c.WorkingDir, TaskContainerName, WorkDir)
	}
	c.WorkingDir = WorkDir

	env := r.env(pods, perPod)
	for _, e := range c.Env {
		if slices.ContainsFunc(env, func(x corev1.EnvVar) bool { return x.Name == e.Name }) {
			w.add("pod_spec: env %s of %s is ignored: Resolute sets it", e.Name, TaskContainerName)
			continue
		}
		env = append(env, e)
	}
	c.Env = env

	c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		if m.MountPath == WorkDir || m.Name == workDirVolume || m.Name == configMapVolume {
			w.add("pod_spec: volume mount %s at %s is ignored: Resolute mounts the work directory there", m.Name, m.MountPath)
			return true
		}
		return false
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: workDirVolume, MountPath: WorkDir})
	for i, m := range r.Spec.Mounts {
		if slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == m.ContainerPath }) {
			w.add("bind mount of %s at %s is ignored: the pod spec mounts something there", m.HostPath, m.ContainerPath)
			continue
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: mountVolume(i), MountPath: m.ContainerPath, ReadOnly: m.ReadOnly})
	}

	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil || sc.RunAsGroup != nil {
			w.add("pod_spec: securityContext runAsUser and runAsGroup of %s are ignored: use det user link-with-agent-user",
				TaskContainerName)
			sc.RunAsUser, sc.RunAsGroup = nil, nil
		}
	}
	c.SecurityContext = r.linkedUser(c.SecurityContext)
	r.resources(&c.Resources, perPod, w)
}

// linkedUser is sc (nil for none) with the owner's linked agent user as
// runAsUser and runAsGroup. An unlinked owner's containers keep the image's
// user (or what a pod-level securityContext says): their default ids on
// the master's machine mean nothing in an image.
func (r PodRequest) linkedUser(sc *corev1.SecurityContext) *corev1.SecurityContext {
	u := r.Spec.RunAs
	if !u.Linked {
		return sc
	}
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	uid, gid := int64(u.UID), int64(u.GID)
	sc.RunAsUser, sc.RunAsGroup = &uid, &gid
	return sc
}

// env is the task container's environment: LaunchSpec.Env sorted by name,
// then Resolute's variables. DET_SLOT_IDS is filled in per pod.
func (r PodRequest) env(pods, perPod int) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, k := range sortedKeys(r.Spec.Env) {
		if !slices.Contains(envResolute, k) {
			env = append(env, corev1.EnvVar{Name: k, Value: r.Spec.Env[k]})
		}
	}
	pp := make([]string, 0, len(r.Spec.PythonPath)+1)
	for _, p := range r.Spec.PythonPath {
		if !path.IsAbs(p) {
			p = path.Join(WorkDir, p)
		}
		pp = append(pp, p)
	}
	if v := r.Spec.Env["PYTHONPATH"]; v != "" {
		pp = append(pp, v)
	}
	if len(pp) > 0 {
		env = append(env, corev1.EnvVar{Name: "PYTHONPATH", Value: strings.Join(pp, ":")})
	}
	env = append(env,
		corev1.EnvVar{Name: "DET_AGENT_ID", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
		corev1.EnvVar{Name: "DET_KUBERNETES_POD_IP", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "DET_SLOT_IDS", Value: "[]"},
		corev1.EnvVar{Name: "DET_KUBERNETES_JOB_PARALLELISM", Value: strconv.Itoa(pods)},
		// The pod's place in its gang: 0 is the chief, whose end ends the
		// allocation (filled in per pod).
		corev1.EnvVar{Name: "RESOLUTE_POD_INDEX", Value: "0"},
	)
	if r.gpus(perPod) == 0 {
		// Without it, images built on nvidia/cuda see every GPU of the node.
		env = append(env, corev1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES", Value: "void"})
	}
	return env
}

func (r PodRequest) gpus(perPod int) int64 {
	if r.SlotType == "cpu" {
		return 0
	}
	return int64(perPod)
}

// resources sets the slot resources of the task container over the user's:
// GPUs are always Resolute's; for slot_type cpu, so is the CPU request, which
// the scheduler counted.
func (r PodRequest) resources(res *corev1.ResourceRequirements, perPod int, w *warnings) {
	gpus := r.gpus(perPod)
	for _, l := range []corev1.ResourceList{res.Requests, res.Limits} {
		if q, ok := l[ResourceGPU]; ok {
			if q.Value() != gpus {
				w.add("pod_spec: %s %s of %s is ignored: the pod has %d", ResourceGPU, q.String(), TaskContainerName, gpus)
			}
			delete(l, ResourceGPU)
		}
	}
	if gpus > 0 {
		res.Requests = setResource(res.Requests, ResourceGPU, *resource.NewQuantity(gpus, resource.DecimalSI))
		res.Limits = setResource(res.Limits, ResourceGPU, *resource.NewQuantity(gpus, resource.DecimalSI))
	}
	if r.SlotType == "cpu" && perPod > 0 {
		cpu := *resource.NewMilliQuantity(r.CPUPerSlot.MilliValue()*int64(perPod), resource.DecimalSI)
		if q, ok := res.Requests[corev1.ResourceCPU]; ok && q.Cmp(cpu) != 0 {
			w.add("pod_spec: cpu request %s of %s is ignored: the pod's %d slots request %s",
				q.String(), TaskContainerName, perPod, cpu.String())
		}
		res.Requests = setResource(res.Requests, corev1.ResourceCPU, cpu)
		if q, ok := res.Limits[corev1.ResourceCPU]; ok && q.Cmp(cpu) < 0 {
			w.add("pod_spec: cpu limit %s of %s is raised to the request %s", q.String(), TaskContainerName, cpu.String())
			res.Limits[corev1.ResourceCPU] = cpu
		}
	}
	if len(res.Requests) == 0 {
		res.Requests = nil
	}
	if len(res.Limits) == 0 {
		res.Limits = nil
	}
}

func setResource(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) corev1.ResourceList {
	if l == nil {
		l = corev1.ResourceList{}
	}
	l[name] = q
	return l
}

// container returns the container of p named name, or nil.
func container(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// pinToNode makes node a required node affinity of the pod.
func pinToNode(s *corev1.PodSpec, node string) {
	requireNodeField(s, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}})
}

// keepOffNodes makes the pod's placement exclude nodes (for a task with no
// slots, which kube-scheduler places: the disabled nodes and those a log
// policy excluded).
func keepOffNodes(s *corev1.PodSpec, nodes []string) {
	requireNodeField(s, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: nodes})
}

// requireNodeField adds req to the pod's required node affinity: into every
// nodeSelectorTerm the pod already has (terms are ORed, so it must be in
// each), or into a new term.
func requireNodeField(s *corev1.PodSpec, req corev1.NodeSelectorRequirement) {
	if s.Affinity == nil {
		s.Affinity = &corev1.Affinity{}
	}
	if s.Affinity.NodeAffinity == nil {
		s.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := s.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, req)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
}

// mountVolume names the volume of the task's i-th mount (bind_mounts and
// shared_fs checkpoint storage, as hostPath volumes).
func mountVolume(i int) string { return "determined-mount-" + strconv.Itoa(i) }
