package k8s

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/resolute-ml/resolute"
)

// Names of the containers, volumes, paths, labels and annotations Resolute
// puts in every pod. The "determined" names are kept so that tooling written
// for Determined (kubectl get pods -l=determined, log collectors) still works.
const (
	InitContainerName = "determined-init-container"
	TaskContainerName = "determined-container"

	ConfigMapDir = "/run/determined/configmap"
	WorkDir      = "/run/determined/workdir"

	configMapVolume = "determined-configmap"
	workDirVolume   = "determined-workdir"

	ContextArchive = "context.tar.gz"
	FilesArchive   = "files.tar.gz"

	LabelAllocation   = "determined"
	LabelTaskID       = "determined.ai/task_id"
	LabelAllocationID = "determined.ai/allocation_id"
	LabelTaskType     = "determined.ai/task_type"
	LabelUser         = "determined.ai/user"
	LabelResourcePool = "determined.ai/resource_pool"
	AnnotationSlots   = "resolute.ai/slots"

	LabelPodGroupName         = "pod-group.scheduling.sigs.k8s.io/name"
	LabelPodGroupMinAvailable = "pod-group.scheduling.sigs.k8s.io/min-available"

	ResourceGPU corev1.ResourceName = "nvidia.com/gpu"
)

// maxConfigMapBytes is the API server's limit on a ConfigMap's data.
const maxConfigMapBytes = corev1.MaxSecretSize

// PodRequest is one allocation to turn into Kubernetes objects.
type PodRequest struct {
	// Spec gives AllocationID, TaskID, Env, Entrypoint or Shell, PythonPath
	// and Files; its Slots, WorkDir and Context are not used here.
	Spec resolute.LaunchSpec
	// Context is the task's context directory (tar.gz), read from
	// Spec.Context: it goes into the ConfigMap.
	Context  []byte
	TaskType string // TRIAL, COMMAND, NOTEBOOK, SHELL, TENSORBOARD or CHECKPOINT_GC
	User     string
	Pool     string
	// Namespace is where the ConfigMap and pods go.
	Namespace string
	// Image is environment.image for the device type; the caller picks it.
	Image string
	// Slots is the total of the allocation (0: a CPU-only task holding no slot).
	Slots int
	// Nodes is the node of each pod, chosen by the scheduler; len(Nodes) is
	// the number of pods.
	Nodes []string
	// PodSlots are the scheduler's slot ids on each pod's node, recorded in
	// the annotation resolute.ai/slots as "0,1,2". Nil for 0-slot tasks.
	PodSlots       [][]int
	MaxSlotsPerPod int
	// SlotType is "gpu" (one nvidia.com/gpu per slot; "" means gpu) or "cpu"
	// (CPUPerSlot CPUs per slot).
	SlotType   string
	CPUPerSlot resource.Quantity // slot_resource_requests.cpu
	// DefaultPodSpec is the pool's (else the top-level) task_container_defaults
	// gpu_pod_spec, cpu_pod_spec or checkpoint_gc_pod_spec; the caller picks
	// it. May be nil.
	DefaultPodSpec *corev1.Pod
	// UserPodSpec is environment.pod_spec. May be nil.
	UserPodSpec *corev1.Pod
	// Priority is resources.priority.
	Priority *int
	// DefaultScheduler is "", "coscheduler" or "preemption".
	DefaultScheduler string
	// ImagePullSecret names a Secret made from registry_auth; "" for none.
	ImagePullSecret string
	// Rendezvous makes the pods of a multi-pod allocation meet at the
	// master's rendezvous (the harness's determined.exec.rendezvous) before
	// the task runs, so that each knows the others' addresses.
	Rendezvous bool
}

// PodLayout returns how many pods an allocation of slots needs and the slots
// of each: one pod when slots fit in maxSlotsPerPod, else slots /
// maxSlotsPerPod pods of maxSlotsPerPod slots. maxSlotsPerPod 0 forbids
// multi-slot tasks. The error is an EInvalid *resolute.Error for users.
func PodLayout(slots, maxSlotsPerPod int) (pods, perPod int, err error) {
	switch {
	case slots < 0:
		return 0, 0, resolute.Errorf(resolute.EInvalid, "slots must not be negative, got %d", slots)
	case maxSlotsPerPod < 0:
		return 0, 0, resolute.Errorf(resolute.EInvalid, "max_slots_per_pod must not be negative, got %d", maxSlotsPerPod)
	case slots == 0:
		return 1, 0, nil
	case slots <= maxSlotsPerPod || slots == 1:
		return 1, slots, nil
	case maxSlotsPerPod == 0:
		return 0, 0, resolute.Errorf(resolute.EInvalid,
			"%d slots: max_slots_per_pod is 0, which forbids multi-slot tasks on Kubernetes", slots)
	case slots%maxSlotsPerPod != 0:
		return 0, 0, resolute.Errorf(resolute.EInvalid,
			"%d slots must be divisible by max_slots_per_pod (%d) to run on Kubernetes", slots, maxSlotsPerPod)
	}
	return slots / maxSlotsPerPod, maxSlotsPerPod, nil
}

// BuildPods returns the ConfigMap and the pods of an allocation, and the
// warnings to put in the task log (the user's values Resolute overrides).
// Errors about the user's configuration are EInvalid *resolute.Error values.
func BuildPods(r PodRequest) (*corev1.ConfigMap, []*corev1.Pod, []string, error) {
	pods, perPod, err := PodLayout(r.Slots, r.MaxSlotsPerPod)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := r.check(pods, perPod); err != nil {
		return nil, nil, nil, err
	}
	name := ObjectName(r.Spec.AllocationID)
	labels := r.labels()

	cm, err := buildConfigMap(r, name, labels)
	if err != nil {
		return nil, nil, nil, err
	}

	base, err := MergePodSpecs(r.DefaultPodSpec, r.UserPodSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &warnings{}
	r.prepareBase(base, name, labels, pods, perPod, w)
	out := make([]*corev1.Pod, pods)
	for i := range pods {
		p := base.DeepCopy()
		var slots []int
		if i < len(r.PodSlots) {
			slots = r.PodSlots[i]
		}
		p.Name = fmt.Sprintf("%s-%d", name, i)
		p.Annotations[AnnotationSlots] = joinInts(slots, ",")
		c := container(p, TaskContainerName)
		for j := range c.Env {
			switch c.Env[j].Name {
			case "DET_SLOT_IDS":
				c.Env[j].Value = "[" + joinInts(slots, ",") + "]"
			case "RESOLUTE_POD_INDEX":
				c.Env[j].Value = strconv.Itoa(i)
			}
		}
		switch {
		case r.Nodes[i] != "":
			pinToNode(&p.Spec, r.Nodes[i])
		case len(r.Spec.AvoidAgents) > 0: // zero-slot tasks go where kube-scheduler puts them, but not there
			keepOffNodes(&p.Spec, r.Spec.AvoidAgents)
		}
		if err := validateObject(p.ObjectMeta); err != nil {
			return nil, nil, nil, resolute.Errorf(resolute.EInvalid, "pod_spec: %v", err)
		}
		out[i] = p
	}
	return cm, out, w.list, nil
}

// check reports requests the caller got wrong; these are Resolute's bugs, not
// the user's, so they are plain errors.
func (r PodRequest) check(pods, perPod int) error {
	switch {
	case r.Spec.AllocationID == "":
		return fmt.Errorf("k8s: pod request without an allocation id")
	case r.Namespace == "" || len(validation.IsDNS1123Label(r.Namespace)) > 0:
		return fmt.Errorf("k8s: allocation %s: invalid namespace %q", r.Spec.AllocationID, r.Namespace)
	case r.Image == "":
		return fmt.Errorf("k8s: allocation %s: no image", r.Spec.AllocationID)
	case len(r.Spec.Entrypoint) == 0 && r.Spec.Shell == "":
		return fmt.Errorf("k8s: allocation %s: neither Entrypoint nor Shell", r.Spec.AllocationID)
	case len(r.Nodes) != pods:
		return fmt.Errorf("k8s: allocation %s: %d nodes for %d pods", r.Spec.AllocationID, len(r.Nodes), pods)
	case r.PodSlots != nil && len(r.PodSlots) != pods:
		return fmt.Errorf("k8s: allocation %s: slots of %d pods for %d pods", r.Spec.AllocationID, len(r.PodSlots), pods)
	case r.SlotType != "" && r.SlotType != "gpu" && r.SlotType != "cpu":
		return fmt.Errorf("k8s: unknown slot type %q", r.SlotType)
	case r.SlotType == "cpu" && perPod > 0 && r.CPUPerSlot.Sign() <= 0:
		return fmt.Errorf("k8s: slot_type cpu needs a positive slot_resource_requests.cpu")
	}
	for i, n := range r.Nodes {
		if n == "" && perPod > 0 { // only zero-slot pods may go anywhere
			return fmt.Errorf("k8s: allocation %s: no node for pod %d", r.Spec.AllocationID, i)
		}
		if r.PodSlots != nil && len(r.PodSlots[i]) != perPod {
			return fmt.Errorf("k8s: allocation %s: pod %d has %d slots, want %d",
				r.Spec.AllocationID, i, len(r.PodSlots[i]), perPod)
		}
	}
	if r.PodSlots == nil && perPod > 0 {
		return fmt.Errorf("k8s: allocation %s: no slot ids for %d slots", r.Spec.AllocationID, r.Slots)
	}
	return nil
}

// labels are Resolute's labels of the allocation's ConfigMap and pods.
func (r PodRequest) labels() map[string]string {
	return map[string]string{
		LabelAllocation:   LabelValue(r.Spec.AllocationID),
		LabelTaskID:       LabelValue(r.Spec.TaskID),
		LabelAllocationID: LabelValue(r.Spec.AllocationID),
		LabelTaskType:     LabelValue(r.TaskType),
		LabelUser:         LabelValue(r.User),
		LabelResourcePool: LabelValue(r.Pool),
	}
}

// maxBaseName leaves room in a 63-character DNS label for "-<pod index>".
const maxBaseName = validation.DNS1123LabelMaxLength - 6

// readableID is the form Resolute's allocation ids take ("trial-12.1",
// "<uuid>.1"): a DNS label then a run number. Replacing the dot by a dash is
// one-to-one on this form, since the run number is all digits.
var readableID = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[0-9]+$`)

// ObjectName is the name of the ConfigMap of an allocation and the prefix of
// its pods' names ("<name>-<index>"): a DNS-1123 label short enough for the
// pod suffix. "trial-12.1" becomes "trial-12-1"; an id of another form gets a
// hash of the id appended, so that different ids never share a name.
func ObjectName(allocationID string) string {
	if readableID.MatchString(allocationID) && len(allocationID) <= maxBaseName {
		return strings.Replace(allocationID, ".", "-", 1)
	}
	sum := sha256.Sum256([]byte(allocationID))
	suffix := "-" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for _, c := range strings.ToLower(allocationID) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	s = s[:min(len(s), maxBaseName-len(suffix))]
	s = strings.Trim(s, "-")
	if s == "" {
		s = "task"
	}
	return s + suffix
}

// LabelValue makes s a valid label value: characters other than letters,
// digits, '-', '_' and '.' become '_', it is cut to 63 characters and
// stripped of non-alphanumeric ends.
func LabelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	s = string(b[:min(len(b), validation.LabelValueMaxLength)])
	return strings.TrimFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	})
}

// readContext reads a task's context directory for its ConfigMap, which
// holds at most maxConfigMapBytes: a larger one is refused before it is
// read whole.
func readContext(ctx context.Context, spec resolute.LaunchSpec) ([]byte, error) {
	if spec.Context == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(spec.Context(ctx), maxConfigMapBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigMapBytes {
		return nil, resolute.Errorf(resolute.ETooLarge, "the context directory takes more than %d bytes gzipped; "+
			"on Kubernetes it travels in a ConfigMap, which holds at most that: leave large files out with .detignore", maxConfigMapBytes)
	}
	return b, nil
}

func buildConfigMap(r PodRequest, name string, labels map[string]string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.Namespace, Labels: labels},
	}
	files, err := filesTarGz(r.Spec.Files)
	if err != nil {
		return nil, err
	}
	// Both keys are always there; the init container skips an empty one.
	cm.BinaryData = map[string][]byte{ContextArchive: {}, FilesArchive: files}
	if len(r.Context) > 0 {
		cm.BinaryData[ContextArchive] = r.Context
	}
	size := 0
	for _, b := range cm.BinaryData {
		size += len(b)
	}
	if size > maxConfigMapBytes {
		return nil, resolute.Errorf(resolute.ETooLarge,
			"the task's context and files take %d bytes; Kubernetes allows %d in a ConfigMap", size, maxConfigMapBytes)
	}
	return cm, nil
}

// filesTarGz packs files (relative slash-separated paths) into a gzipped tar
// with mode 0700 files and directories. The output depends only on files.
func filesTarGz(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		c := path.Clean(n)
		if n == "" || path.IsAbs(n) || c != n || c == "." || c == ".." || strings.HasPrefix(c, "../") {
			return nil, fmt.Errorf("k8s: file path %q is not a clean relative path", n)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	// Most tasks ship the same files (the harness): the archive of the same
	// files is made once.
	var h maphash.Hash
	h.SetSeed(archiveSeed)
	for _, n := range names {
		h.WriteString(n)
		h.WriteByte(0)
		h.Write(files[n])
		h.WriteByte(0)
	}
	key := h.Sum64()
	archives.Lock()
	defer archives.Unlock()
	if b, ok := archives.m[key]; ok {
		return b, nil
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	mtime := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, n := range names {
		var parents []string
		for d := path.Dir(n); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			parents = append(parents, d)
		}
		slices.Reverse(parents)
		for _, d := range parents {
			h := &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o700, ModTime: mtime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o700, Size: int64(len(files[n])), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	if len(archives.m) >= 16 {
		clear(archives.m)
	}
	archives.m[key] = buf.Bytes()
	return buf.Bytes(), nil
}

// archives are the latest files.tar.gz made, by a hash of their files.
var archives = struct {
	sync.Mutex
	m map[uint64][]byte
}{m: map[uint64][]byte{}}

var archiveSeed = maphash.MakeSeed()

// validateObject checks what the API server would check of metadata that
// came partly from the user's pod spec.
func validateObject(m metav1.ObjectMeta) error {
	if errs := validation.IsDNS1123Label(m.Name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", m.Name, strings.Join(errs, "; "))
	}
	for _, k := range sortedKeys(m.Labels) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(m.Labels[k]); len(errs) > 0 {
			return fmt.Errorf("label %s=%q: %s", k, m.Labels[k], strings.Join(errs, "; "))
		}
	}
	for _, k := range sortedKeys(m.Annotations) {
		if errs := validation.IsQualifiedName(strings.ToLower(k)); len(errs) > 0 {
			return fmt.Errorf("annotation %q: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// warnings collects the task-log lines about overridden user values, once each.
type warnings struct{ list []string }

func (w *warnings) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(w.list, s) {
		w.list = append(w.list, s)
	}
}
