package k8s

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/resolute-ml/resolute"
)

// trialRequest is a 16-slot GPU trial on two 8-GPU nodes.
func trialRequest() PodRequest {
	return PodRequest{
		Spec: resolute.LaunchSpec{
			AllocationID: "trial-12.1",
			TaskID:       "trial-12",
			Env:          map[string]string{"DET_MASTER": "http://master:8080", "A_FIRST": "1"},
			Entrypoint:   []string{"python3", "-m", "determined.exec.harness"},
			Files:        map[string][]byte{"startup-hook.sh": []byte("true\n")},
		},
		TaskType:       "TRIAL",
		User:           "alice",
		Pool:           "gpu",
		Namespace:      "team-a",
		Image:          "determinedai/pytorch-ngc:0.38.0",
		Slots:          16,
		Nodes:          []string{"node-a", "node-b"},
		PodSlots:       [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}},
		MaxSlotsPerPod: 8,
		SlotType:       "gpu",
		Rendezvous:     true,
	}
}

func TestPodLayout(t *testing.T) {
	tests := map[string]struct {
		slots, max    int
		pods, perPod  int
		wantErrSubstr string
	}{
		"a task without slots is one pod with none":             {slots: 0, max: 8, pods: 1, perPod: 0},
		"one slot is one pod":                                   {slots: 1, max: 8, pods: 1, perPod: 1},
		"a full node is one pod":                                {slots: 8, max: 8, pods: 1, perPod: 8},
		"two nodes' worth is two pods":                          {slots: 16, max: 8, pods: 2, perPod: 8},
		"slots not divisible by the maximum are refused":        {slots: 12, max: 8, wantErrSubstr: "must be divisible by max_slots_per_pod"},
		"a maximum of 0 forbids multi-slot tasks":               {slots: 2, max: 0, wantErrSubstr: "forbids multi-slot tasks"},
		"a maximum of 0 still allows one slot":                  {slots: 1, max: 0, pods: 1, perPod: 1},
		"a maximum of 0 still allows tasks without slots":       {slots: 0, max: 0, pods: 1, perPod: 0},
		"fewer slots than the maximum fit in one pod":           {slots: 3, max: 8, pods: 1, perPod: 3},
		"negative slots are refused":                            {slots: -1, max: 8, wantErrSubstr: "negative"},
		"four nodes of a cluster of 4-GPU nodes for 16 slots":   {slots: 16, max: 4, pods: 4, perPod: 4},
		"a gang smaller than twice the maximum but over it err": {slots: 9, max: 8, wantErrSubstr: "divisible"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			pods, perPod, err := PodLayout(tt.slots, tt.max)
			if tt.wantErrSubstr != "" {
				if err == nil || !strings.Contains(resolute.ErrorMessage(err), tt.wantErrSubstr) {
					t.Fatalf("PodLayout(%d, %d) error = %v, want one with %q", tt.slots, tt.max, err, tt.wantErrSubstr)
				}
				if resolute.ErrorCode(err) != resolute.EInvalid {
					t.Errorf("error code = %q, want %q", resolute.ErrorCode(err), resolute.EInvalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pods != tt.pods || perPod != tt.perPod {
				t.Errorf("PodLayout(%d, %d) = %d, %d; want %d, %d", tt.slots, tt.max, pods, perPod, tt.pods, tt.perPod)
			}
		})
	}
}

func TestPodObjectName(t *testing.T) {
	tests := map[string]struct {
		id   string
		want string // "" to check only validity
	}{
		"a trial allocation keeps its readable name": {id: "trial-12.1", want: "trial-12-1"},
		"a task uuid allocation keeps its readable name": {id: "0f8b2c1e-5d4a-4b8e-9a51-3c2d1e0f9a7b.1",
			want: "0f8b2c1e-5d4a-4b8e-9a51-3c2d1e0f9a7b-1"},
		"upper case and underscores get a hash":      {id: "Trial_12.1"},
		"an id without a run number gets a hash":     {id: "trial-12-1"},
		"an id of symbols only is still a name":      {id: "._.-"},
		"a long id is cut and hashed":                {id: strings.Repeat("a", 70) + ".1"},
		"a long id with many dots is cut and hashed": {id: strings.Repeat("x.", 60) + "1"},
	}
	seen := map[string]string{}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := ObjectName(tt.id)
			if tt.want != "" && got != tt.want {
				t.Errorf("ObjectName(%q) = %q, want %q", tt.id, got, tt.want)
			}
			if errs := validation.IsDNS1123Label(got + "-99999"); len(errs) > 0 {
				t.Errorf("ObjectName(%q) = %q: pod names from it are invalid: %v", tt.id, got, errs)
			}
		})
		if other, ok := seen[ObjectName(tt.id)]; ok {
			t.Errorf("ids %q and %q share the name %q", tt.id, other, ObjectName(tt.id))
		}
		seen[ObjectName(tt.id)] = tt.id
	}
}

func TestPodLabelValue(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a valid value is kept":                {in: "trial-12.1", want: "trial-12.1"},
		"an email gets underscores":            {in: "alice@example.com", want: "alice_example.com"},
		"non-alphanumeric ends are trimmed":    {in: "-bob smith ", want: "bob_smith"},
		"an empty value stays empty":           {in: "", want: ""},
		"a long value is cut to 63 characters": {in: strings.Repeat("ab", 40), want: strings.Repeat("ab", 31) + "a"},
		"non-ASCII characters are replaced":    {in: "zoë", want: "zo"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := LabelValue(tt.in)
			if got != tt.want {
				t.Errorf("LabelValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("LabelValue(%q) = %q is invalid: %v", tt.in, got, errs)
			}
		})
	}
}

// TestBuildPodsTrial checks a whole pod of a two-pod GPU trial.
func TestBuildPodsTrial(t *testing.T) {
	r := trialRequest()
	cm, pods, warns, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings = %q, want none", warns)
	}
	labels := map[string]string{
		"determined": "trial-12.1", "determined.ai/task_id": "trial-12", "determined.ai/allocation_id": "trial-12.1",
		"determined.ai/task_type": "TRIAL", "determined.ai/user": "alice", "determined.ai/resource_pool": "gpu",
	}
	if diff := cmp.Diff(metav1.ObjectMeta{Name: "trial-12-1", Namespace: "team-a", Labels: labels}, cm.ObjectMeta); diff != "" {
		t.Errorf("ConfigMap metadata (-want +got):\n%s", diff)
	}
	if len(pods) != 2 {
		t.Fatalf("got %d pods, want 2", len(pods))
	}
	gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "trial-12-1-1", Namespace: "team-a", Labels: labels,
			Annotations: map[string]string{"resolute.ai/slots": "0,1,2,3,4,5,6,7",
				"kubectl.kubernetes.io/default-container": "determined-container"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:     corev1.RestartPolicyNever,
			PriorityClassName: "determined-medium-priority",
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"node-b"}}},
				}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "determined-configmap", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "trial-12-1"}}}},
				{Name: "determined-workdir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			InitContainers: []corev1.Container{{
				Name: "determined-init-container", Image: "determinedai/pytorch-ngc:0.38.0",
				Command: []string{"sh", "-c", initScript}, WorkingDir: "/run/determined/workdir",
				VolumeMounts: []corev1.VolumeMount{
					{Name: "determined-configmap", MountPath: "/run/determined/configmap", ReadOnly: true},
					{Name: "determined-workdir", MountPath: "/run/determined/workdir"},
				},
			}},
			Containers: []corev1.Container{{
				Name: "determined-container", Image: "determinedai/pytorch-ngc:0.38.0",
				// Two pods: they meet at the rendezvous first.
				Command:    []string{"sh", "-c", rendezvousScript, "rendezvous", "python3", "-m", "determined.exec.harness"},
				WorkingDir: "/run/determined/workdir",
				Env: []corev1.EnvVar{
					{Name: "A_FIRST", Value: "1"},
					{Name: "DET_MASTER", Value: "http://master:8080"},
					{Name: "DET_AGENT_ID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
					{Name: "DET_KUBERNETES_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					{Name: "DET_SLOT_IDS", Value: "[0,1,2,3,4,5,6,7]"},
					{Name: "DET_KUBERNETES_JOB_PARALLELISM", Value: "2"},
					{Name: "RESOLUTE_POD_INDEX", Value: "1"},
				},
				Resources:    corev1.ResourceRequirements{Requests: gpus, Limits: gpus},
				VolumeMounts: []corev1.VolumeMount{{Name: "determined-workdir", MountPath: "/run/determined/workdir"}},
			}},
		},
	}
	if diff := cmp.Diff(want, pods[1]); diff != "" {
		t.Errorf("second pod (-want +got):\n%s", diff)
	}
	if pods[0].Name != "trial-12-1-0" || pods[0].Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.
		NodeSelectorTerms[0].MatchFields[0].Values[0] != "node-a" {
		t.Errorf("first pod is %s pinned to %v, want trial-12-1-0 on node-a", pods[0].Name, pods[0].Spec.Affinity)
	}
	for _, p := range pods {
		checkValid(t, p.ObjectMeta)
	}
	checkValid(t, cm.ObjectMeta)
}

// checkValid fails t when the API server would refuse m's name or labels.
func checkValid(t *testing.T, m metav1.ObjectMeta) {
	t.Helper()
	if errs := validation.IsDNS1123Label(m.Name); len(errs) > 0 {
		t.Errorf("name %q: %v", m.Name, errs)
	}
	for k, v := range m.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, v, errs)
		}
	}
	for k := range m.Annotations {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("annotation %s: %v", k, errs)
		}
	}
}

func TestBuildPodsValidNames(t *testing.T) {
	tests := map[string]func(*PodRequest){
		"a long allocation id": func(r *PodRequest) {
			r.Spec.AllocationID = strings.Repeat("Experiment_", 10) + ".1"
			r.Spec.TaskID = strings.Repeat("Experiment_", 10)
		},
		"a user and pool that are not label values": func(r *PodRequest) {
			r.User = "alice@example.com"
			r.Pool = "GPU pool #1 " + strings.Repeat("x", 80)
		},
		"an empty pool": func(r *PodRequest) { r.Pool = "" },
		"the coscheduler": func(r *PodRequest) {
			r.DefaultScheduler = "coscheduler"
			r.Spec.AllocationID = strings.Repeat("z", 80) + ".3"
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			change(&r)
			cm, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			checkValid(t, cm.ObjectMeta)
			for _, p := range pods {
				checkValid(t, p.ObjectMeta)
				if v := p.Spec.Volumes[len(p.Spec.Volumes)-2].ConfigMap.Name; v != cm.Name {
					t.Errorf("pod mounts ConfigMap %q, want %q", v, cm.Name)
				}
			}
		})
	}
}

func TestBuildPodsErrors(t *testing.T) {
	tests := map[string]struct {
		change   func(*PodRequest)
		wantCode string // "" for a plain (internal) error
	}{
		"slots not divisible by the maximum": {change: func(r *PodRequest) { r.Slots = 12 }, wantCode: resolute.EInvalid},
		"fewer nodes than pods": {change: func(r *PodRequest) {
			r.Nodes = r.Nodes[:1]
		}},
		"slot ids of the wrong count": {change: func(r *PodRequest) { r.PodSlots[1] = []int{0} }},
		"no slot ids for slots":       {change: func(r *PodRequest) { r.PodSlots = nil }},
		"no image":                    {change: func(r *PodRequest) { r.Image = "" }},
		"no command":                  {change: func(r *PodRequest) { r.Spec.Entrypoint = nil }},
		"an invalid namespace":        {change: func(r *PodRequest) { r.Namespace = "Team A" }},
		"cpu slots without a cpu request": {change: func(r *PodRequest) {
			r.SlotType = "cpu"
		}},
		"a user label Kubernetes refuses": {change: func(r *PodRequest) {
			r.UserPodSpec = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a b"}}}
		}, wantCode: resolute.EInvalid},
		"a file outside the work directory": {change: func(r *PodRequest) {
			r.Spec.Files = map[string][]byte{"../x": nil}
		}},
		"a context over the ConfigMap limit": {change: func(r *PodRequest) {
			r.Context = make([]byte, corev1.MaxSecretSize+1)
		}, wantCode: resolute.ETooLarge},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			tt.change(&r)
			_, _, _, err := BuildPods(r)
			if err == nil {
				t.Fatal("BuildPods succeeded, want an error")
			}
			var re *resolute.Error
			if got := errors.As(err, &re); got != (tt.wantCode != "") || (got && re.Code != tt.wantCode) {
				t.Errorf("error %v: want code %q", err, tt.wantCode)
			}
		})
	}
}

func TestBuildPodsConfigMapArchives(t *testing.T) {
	r := trialRequest()
	r.Spec.Files = map[string][]byte{
		"startup-hook.sh":          []byte("echo hi\n"),
		"det/train/config.yaml":    []byte("a: 1\n"),
		"det/train/hparams.json":   []byte("{}"),
		"run.sh":                   []byte("#!/bin/sh\n"),
		"det/overwritten-by-files": []byte("files"),
	}
	r.Context = tarGz(t, map[string]string{"model_def.py": "import torch\n", "det/overwritten-by-files": "context"})
	cm, _, _, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cm.BinaryData["context.tar.gz"], r.Context) {
		t.Error("context.tar.gz is not the task's context")
	}

	got := map[string]string{}
	modes := map[string]int64{}
	tr := tar.NewReader(gunzip(t, cm.BinaryData["files.tar.gz"]))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = string(b)
		modes[h.Name] = h.Mode
	}
	want := map[string]string{"det/": "", "det/train/": "", "startup-hook.sh": "echo hi\n", "det/train/config.yaml": "a: 1\n",
		"det/train/hparams.json": "{}", "run.sh": "#!/bin/sh\n", "det/overwritten-by-files": "files"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files.tar.gz (-want +got):\n%s", diff)
	}
	for n, m := range modes {
		if m != 0o700 {
			t.Errorf("%s has mode %o, want 700", n, m)
		}
	}

	again, _, _, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.BinaryData["files.tar.gz"], cm.BinaryData["files.tar.gz"]) {
		t.Error("files.tar.gz differs between two builds of the same request")
	}

	// The init container's script, run by sh on this machine with the paths
	// moved into a temporary directory, unpacks both archives, files last.
	dir := t.TempDir()
	cmDir, work := filepath.Join(dir, "configmap"), filepath.Join(dir, "workdir")
	for _, d := range []string{cmDir, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range cm.BinaryData {
		if err := os.WriteFile(filepath.Join(cmDir, k), v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := strings.NewReplacer(ConfigMapDir, cmDir, WorkDir, work).Replace(initScript)
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("init script: %v\n%s", err, out)
	}
	for name, content := range map[string]string{"model_def.py": "import torch\n", "det/train/config.yaml": "a: 1\n",
		"det/overwritten-by-files": "files", "startup-hook.sh": "echo hi\n"} {
		b, err := os.ReadFile(filepath.Join(work, name))
		if err != nil || string(b) != content {
			t.Errorf("%s in the work directory = %q, %v; want %q", name, b, err, content)
		}
	}
}

func TestPodInitScriptSkipsEmptyArchives(t *testing.T) {
	r := trialRequest()
	r.Spec.Files = nil
	cm, _, _, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	if c := cm.BinaryData["context.tar.gz"]; c == nil || len(c) != 0 {
		t.Errorf("context.tar.gz = %v, want it there and empty", c)
	}
	if len(cm.BinaryData["files.tar.gz"]) == 0 {
		t.Error("files.tar.gz is empty, want an archive without files")
	}
	dir := t.TempDir()
	cmDir, work := filepath.Join(dir, "configmap"), filepath.Join(dir, "workdir")
	for _, d := range []string{cmDir, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cmDir, "context.tar.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// files.tar.gz is missing altogether, as with an optional ConfigMap key.
	script := strings.NewReplacer(ConfigMapDir, cmDir, WorkDir, work).Replace(initScript)
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("init script without archives: %v\n%s", err, out)
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
		t.Errorf("work directory has %v, %v; want nothing", entries, err)
	}
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range sortedKeys(files) {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t *testing.T, b []byte) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestAContextOverWhatAConfigMapHoldsIsRefusedBeforeItIsReadWhole(t *testing.T) {
	read := 0
	spec := resolute.LaunchSpec{Context: func(context.Context) io.Reader {
		return &countingZeros{n: corev1.MaxSecretSize * 4, read: &read}
	}}
	_, err := readContext(context.Background(), spec)
	if resolute.ErrorCode(err) != resolute.ETooLarge || !strings.Contains(err.Error(), ".detignore") {
		t.Fatalf("readContext: %v; want too_large saying how to leave files out", err)
	}
	if read > corev1.MaxSecretSize+64<<10 {
		t.Errorf("read %d bytes of a context over the %d a ConfigMap holds", read, corev1.MaxSecretSize)
	}
	small := []byte("a small context")
	spec.Context = func(context.Context) io.Reader { return bytes.NewReader(small) }
	if got, err := readContext(context.Background(), spec); err != nil || !bytes.Equal(got, small) {
		t.Errorf("readContext of a small context: %q, %v", got, err)
	}
}

// countingZeros is n zero bytes, counting what was read.
type countingZeros struct {
	n    int
	read *int
}

func (z *countingZeros) Read(p []byte) (int, error) {
	if *z.read >= z.n {
		return 0, io.EOF
	}
	k := min(len(p), z.n-*z.read)
	clear(p[:k])
	*z.read += k
	return k, nil
}

// TestAPodWithoutSlotsKeepsOffTheNodesItAvoids: kube-scheduler places a
// task that needs no slots, so its pod's required node affinity excludes
// the disabled and excluded nodes, in every term the user's pod_spec has.
func TestAPodWithoutSlotsKeepsOffTheNodesItAvoids(t *testing.T) {
	cpuRequest := func() PodRequest {
		r := trialRequest()
		r.Spec.AllocationID, r.Spec.TaskID = "cmd-1.1", "cmd-1"
		r.TaskType, r.Slots, r.Nodes, r.PodSlots, r.Rendezvous = "COMMAND", 0, []string{""}, nil, false
		return r
	}
	notIn := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a", "node-c"}}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}
	tests := map[string]struct {
		avoid    []string
		userTerm bool
		want     *corev1.Affinity
	}{
		"nothing to avoid: no affinity": {},
		"avoided nodes": {avoid: []string{"node-a", "node-c"}, want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{notIn}}}}}}},
		"avoided nodes and the user's term": {avoid: []string{"node-a", "node-c"}, userTerm: true, want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{notIn}}}}}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := cpuRequest()
			r.Spec.AvoidAgents = tt.avoid
			if tt.userTerm {
				r.UserPodSpec = &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}}}
			}
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(pods) != 1 {
				t.Fatalf("%d pods, want 1", len(pods))
			}
			if diff := cmp.Diff(tt.want, pods[0].Spec.Affinity); diff != "" {
				t.Errorf("affinity (-want +got):\n%s", diff)
			}
		})
	}
}
