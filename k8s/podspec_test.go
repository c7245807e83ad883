package k8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
)

func podWith(spec corev1.PodSpec) *corev1.Pod { return &corev1.Pod{Spec: spec} }

func hostPathVolume(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

func TestMergePodSpecs(t *testing.T) {
	toleration := corev1.Toleration{Key: "pool_taint", Operator: "Equal", Value: "prod", Effect: "NoSchedule"}
	secretVolume := corev1.Volume{Name: "secret-volume", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: "prod-test-secret"}}}
	emptyDirOverride := corev1.Volume{Name: "empty-dir-override", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("100Mi"))}}}
	tests := map[string]struct {
		def, user *corev1.Pod
		want      *corev1.Pod
	}{
		"neither spec gives an empty pod": {want: &corev1.Pod{}},
		"the default alone is kept": {
			def:  podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{toleration}}),
			want: podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{toleration}}),
		},
		"the user's alone is kept": {
			user: podWith(corev1.PodSpec{ServiceAccountName: "s3-writer"}),
			want: podWith(corev1.PodSpec{ServiceAccountName: "s3-writer"}),
		},
		"a default volume and a user volume are both kept": {
			def:  podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("example-volume", "/data")}}),
			user: podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("user-volume", "/scratch")}}),
			want: podWith(corev1.PodSpec{Volumes: []corev1.Volume{
				hostPathVolume("user-volume", "/scratch"), hostPathVolume("example-volume", "/data")}}),
		},
		"a user volume with the default's name wins": {
			def:  podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("data", "/data")}}),
			user: podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("data", "/mnt/mine")}}),
			want: podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("data", "/mnt/mine")}}),
		},
		// The seeds' example: the user overrides the default's mount by
		// mounting another volume at the same path.
		"a user mount at the default's path wins": {
			def: podWith(corev1.PodSpec{
				Volumes: []corev1.Volume{secretVolume},
				Containers: []corev1.Container{{Name: "determined-container", VolumeMounts: []corev1.VolumeMount{
					{Name: "secret-volume", MountPath: "/etc/secret-volume"}}}},
			}),
			user: podWith(corev1.PodSpec{
				Volumes: []corev1.Volume{emptyDirOverride},
				Containers: []corev1.Container{{Name: "determined-container", VolumeMounts: []corev1.VolumeMount{
					{Name: "empty-dir-override", MountPath: "/etc/secret-volume"}}}},
			}),
			want: podWith(corev1.PodSpec{
				Volumes: []corev1.Volume{emptyDirOverride, secretVolume},
				Containers: []corev1.Container{{Name: "determined-container", VolumeMounts: []corev1.VolumeMount{
					{Name: "empty-dir-override", MountPath: "/etc/secret-volume"}}}},
			}),
		},
		"the default's tolerations and nodeSelector stay under a user spec without them": {
			def: podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{toleration},
				NodeSelector: map[string]string{"gpu": "a100"}}),
			user: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "task-specific-label"}},
				Spec: corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}},
			want: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "task-specific-label"}},
				Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{toleration}, NodeSelector: map[string]string{"gpu": "a100"},
					ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}},
		},
		"nodeSelector maps merge key by key, the user's value winning": {
			def:  podWith(corev1.PodSpec{NodeSelector: map[string]string{"gpu": "a100", "zone": "a"}}),
			user: podWith(corev1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"}}),
			want: podWith(corev1.PodSpec{NodeSelector: map[string]string{"gpu": "h100", "zone": "a"}}),
		},
		"the user's tolerations replace the default's": {
			def:  podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{toleration}}),
			user: podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "mine", Operator: "Exists"}}}),
			want: podWith(corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "mine", Operator: "Exists"}}}),
		},
		"a default sidecar is kept beside the user's determined-container": {
			def: podWith(corev1.PodSpec{Containers: []corev1.Container{
				{Name: "determined-container", VolumeMounts: []corev1.VolumeMount{{Name: "example-volume", MountPath: "/example-data"}}},
				{Name: "sidecar-container", Image: "alpine:latest"},
			}}),
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}}),
			want: podWith(corev1.PodSpec{Containers: []corev1.Container{
				{Name: "determined-container", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
					VolumeMounts: []corev1.VolumeMount{{Name: "example-volume", MountPath: "/example-data"}}},
				{Name: "sidecar-container", Image: "alpine:latest"},
			}}),
		},
		"resources of determined-container merge by resource, the user's winning": {
			def: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("8Gi"), "cpu": resource.MustParse("2")}}}}}),
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("32Gi")}}}}}),
			want: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("32Gi"), "cpu": resource.MustParse("2")}}}}}),
		},
		"labels merge, the user's value winning": {
			def:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "gpu-label", "team": "ml"}}},
			user: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "task-specific-label"}}},
			want: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "task-specific-label", "team": "ml"}}},
		},
		"the user's priority class replaces the default's": {
			def:  podWith(corev1.PodSpec{PriorityClassName: "low"}),
			user: podWith(corev1.PodSpec{PriorityClassName: "high"}),
			want: podWith(corev1.PodSpec{PriorityClassName: "high"}),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var defBefore, userBefore *corev1.Pod
			if tt.def != nil {
				defBefore = tt.def.DeepCopy()
			}
			if tt.user != nil {
				userBefore = tt.user.DeepCopy()
			}
			got, err := MergePodSpecs(tt.def, tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("MergePodSpecs (-want +got):\n%s", diff)
			}
			if !cmp.Equal(defBefore, tt.def) || !cmp.Equal(userBefore, tt.user) {
				t.Error("MergePodSpecs changed its arguments")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestPriorityClassName(t *testing.T) {
	tests := map[string]struct {
		specClass string
		taskType  string
		priority  *int
		want      string
	}{
		"checkpoint GC gets the system class":       {taskType: "CHECKPOINT_GC", want: "determined-system-priority"},
		"a GC pod spec's class wins":                {specClass: "gc-low", taskType: "CHECKPOINT_GC", want: "gc-low"},
		"the pod spec's class wins over a priority": {specClass: "team-high", priority: ptr(42), want: "team-high"},
		"a priority gives Resolute's class":         {priority: ptr(42), want: "resolute-priority-42"},
		"a negative priority still names a class":   {priority: ptr(-5), want: "resolute-priority--5"},
		"neither gives the medium class":            {want: "determined-medium-priority"},
		"the pod spec's class alone is kept":        {specClass: "determined-medium-priority", want: "determined-medium-priority"},
		"priority zero is a priority, not unset":    {priority: ptr(0), want: "resolute-priority-0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PriorityClassName(tt.specClass, tt.taskType, tt.priority); got != tt.want {
				t.Errorf("PriorityClassName(%q, %q, %v) = %q, want %q", tt.specClass, tt.taskType, tt.priority, got, tt.want)
			}
		})
	}
}

func TestBuildPodsPriorityClass(t *testing.T) {
	tests := map[string]struct {
		def, user *corev1.Pod
		priority  *int
		want      string
	}{
		"resources.priority":                   {priority: ptr(42), want: "resolute-priority-42"},
		"the user's class over the priority":   {user: podWith(corev1.PodSpec{PriorityClassName: "mine"}), priority: ptr(42), want: "mine"},
		"the default spec's class":             {def: podWith(corev1.PodSpec{PriorityClassName: "pool-class"}), want: "pool-class"},
		"nothing set":                          {want: "determined-medium-priority"},
		"a user's numeric priority is dropped": {user: podWith(corev1.PodSpec{Priority: ptr(int32(7))}), want: "determined-medium-priority"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			r.DefaultPodSpec, r.UserPodSpec, r.Priority = tt.def, tt.user, tt.priority
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				if p.Spec.PriorityClassName != tt.want || p.Spec.Priority != nil {
					t.Errorf("%s: priorityClassName %q, priority %v; want %q and no priority",
						p.Name, p.Spec.PriorityClassName, p.Spec.Priority, tt.want)
				}
			}
		})
	}
}

// TestBuildPodsMergesPodSpecs checks that what users may configure survives
// into the pods, on top of the default pod spec.
func TestBuildPodsMergesPodSpecs(t *testing.T) {
	r := trialRequest()
	r.DefaultPodSpec = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "gpu-label"}},
		Spec: corev1.PodSpec{
			Tolerations:  []corev1.Toleration{{Key: "pool_taint", Operator: "Equal", Value: "prod", Effect: "NoSchedule"}},
			NodeSelector: map[string]string{"gpu": "a100"},
			Volumes:      []corev1.Volume{hostPathVolume("example-volume", "/data")},
			Containers: []corev1.Container{
				{Name: "determined-container", VolumeMounts: []corev1.VolumeMount{{Name: "example-volume", MountPath: "/example-data"}}},
				{Name: "sidecar-container", Image: "alpine:latest"},
			},
		},
	}
	r.UserPodSpec = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"customLabel": "task-specific-label"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "s3-writer",
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "regcred"}},
			Volumes:            []corev1.Volume{hostPathVolume("scratch", "/scratch")},
			InitContainers:     []corev1.Container{{Name: "fetch-data", Image: "busybox"}},
			Containers: []corev1.Container{{
				Name: "determined-container",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"memory": resource.MustParse("32Gi"), "cpu": resource.MustParse("4")},
					Limits:   corev1.ResourceList{"memory": resource.MustParse("64Gi")},
				},
				VolumeMounts:    []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
				SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
				Env:             []corev1.EnvVar{{Name: "HF_HOME", Value: "/scratch/hf"}},
			}},
		},
	}
	r.ImagePullSecret = "resolute-registry-auth"
	_, pods, warns, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings = %q, want none", warns)
	}
	p := pods[0]
	s := p.Spec
	if diff := cmp.Diff(map[string]string{"gpu": "a100"}, s.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if len(s.Tolerations) != 1 || s.Tolerations[0].Key != "pool_taint" {
		t.Errorf("tolerations = %v, want the default's", s.Tolerations)
	}
	if p.Labels["customLabel"] != "task-specific-label" || p.Labels["determined"] != "trial-12.1" {
		t.Errorf("labels = %v, want the user's customLabel and Resolute's", p.Labels)
	}
	if s.ServiceAccountName != "s3-writer" {
		t.Errorf("serviceAccountName = %q, want s3-writer", s.ServiceAccountName)
	}
	if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "regcred"}, {Name: "resolute-registry-auth"}}, s.ImagePullSecrets); diff != "" {
		t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"scratch", "example-volume", "determined-configmap", "determined-workdir"}, names(s.Volumes, volumeName)); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fetch-data", "determined-init-container"}, names(s.InitContainers, containerName)); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"determined-container", "sidecar-container"}, names(s.Containers, containerName)); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	c := s.Containers[0]
	wantResources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"memory": resource.MustParse("32Gi"), "cpu": resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("8")},
		Limits:   corev1.ResourceList{"memory": resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("8")},
	}
	if diff := cmp.Diff(wantResources, c.Resources); diff != "" {
		t.Errorf("determined-container resources (-want +got):\n%s", diff)
	}
	wantMounts := []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}, {Name: "example-volume", MountPath: "/example-data"},
		{Name: "determined-workdir", MountPath: "/run/determined/workdir"}}
	if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
		t.Errorf("determined-container volumeMounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&corev1.SecurityContext{Privileged: ptr(true)}, c.SecurityContext); diff != "" {
		t.Errorf("determined-container securityContext (-want +got):\n%s", diff)
	}
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HF_HOME" }); i < 0 || c.Env[i].Value != "/scratch/hf" {
		t.Errorf("env = %v, want the user's HF_HOME", c.Env)
	}
	if s.Containers[1].Image != "alpine:latest" {
		t.Errorf("sidecar image = %q, want alpine:latest", s.Containers[1].Image)
	}
	if !cmp.Equal(r.DefaultPodSpec.Spec.Containers[0].VolumeMounts, []corev1.VolumeMount{{Name: "example-volume", MountPath: "/example-data"}}) {
		t.Error("BuildPods changed the default pod spec")
	}
}

func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func volumeName(v corev1.Volume) string       { return v.Name }
func containerName(c corev1.Container) string { return c.Name }

func TestBuildPodsOverridesWithWarnings(t *testing.T) {
	tests := map[string]struct {
		user      *corev1.Pod
		check     func(*testing.T, *corev1.Pod)
		wantWarns []string // substrings, one per warning
	}{
		"hostNetwork": {
			user:      podWith(corev1.PodSpec{HostNetwork: true}),
			check:     func(t *testing.T, p *corev1.Pod) { expect(t, "hostNetwork", p.Spec.HostNetwork, false) },
			wantWarns: []string{"hostNetwork"},
		},
		"restartPolicy": {
			user: podWith(corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways}),
			check: func(t *testing.T, p *corev1.Pod) {
				expect(t, "restartPolicy", p.Spec.RestartPolicy, corev1.RestartPolicyNever)
			},
			wantWarns: []string{"restartPolicy Always"},
		},
		"restartPolicy Never is no override": {
			user: podWith(corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}),
		},
		"name and namespace": {
			user: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "my-pod", Namespace: "elsewhere"}},
			check: func(t *testing.T, p *corev1.Pod) {
				expect(t, "namespace", p.Namespace, "team-a")
				if !strings.HasPrefix(p.Name, "trial-12-1-") {
					t.Errorf("name = %q, want Resolute's", p.Name)
				}
			},
			wantWarns: []string{"metadata.name", "metadata.namespace \"elsewhere\""},
		},
		"runAsUser and runAsGroup of determined-container": {
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0)), RunAsGroup: ptr(int64(0)), Privileged: ptr(true)}}}}),
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff(&corev1.SecurityContext{Privileged: ptr(true)}, p.Spec.Containers[0].SecurityContext); diff != "" {
					t.Errorf("securityContext (-want +got):\n%s", diff)
				}
			},
			wantWarns: []string{"runAsUser"},
		},
		"a GPU count": {
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}),
			check: func(t *testing.T, p *corev1.Pod) {
				got := p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]
				expect(t, "GPU limit", got.Value(), int64(8))
			},
			wantWarns: []string{"nvidia.com/gpu 1"},
		},
		"the same GPU count is no override": {
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}}}}),
		},
		"the image, command and working directory of determined-container": {
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container", Image: "mine",
				Command: []string{"sleep"}, Args: []string{"inf"}, WorkingDir: "/tmp"}}}),
			check: func(t *testing.T, p *corev1.Pod) {
				c := p.Spec.Containers[0]
				expect(t, "image", c.Image, "determinedai/pytorch-ngc:0.38.0")
				expect(t, "workingDir", c.WorkingDir, "/run/determined/workdir")
				if c.Args != nil || !slices.Contains(c.Command, "determined.exec.harness") || slices.Contains(c.Command, "sleep") {
					t.Errorf("command %q args %q, want the task's", c.Command, c.Args)
				}
			},
			wantWarns: []string{"image", "command and args", "workingDir \"/tmp\""},
		},
		"Resolute's labels and env": {
			user: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"determined.ai/user": "mallory"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
					Env: []corev1.EnvVar{{Name: "DET_SLOT_IDS", Value: "[9]"}}}}}},
			check: func(t *testing.T, p *corev1.Pod) {
				expect(t, "user label", p.Labels["determined.ai/user"], "alice")
				expect(t, "DET_SLOT_IDS", envValue(p, "DET_SLOT_IDS"), "[0,1,2,3,4,5,6,7]")
			},
			wantWarns: []string{"label determined.ai/user=\"mallory\"", "env DET_SLOT_IDS"},
		},
		"a user nodeName": {
			user:      podWith(corev1.PodSpec{NodeName: "node-z"}),
			check:     func(t *testing.T, p *corev1.Pod) { expect(t, "nodeName", p.Spec.NodeName, "") },
			wantWarns: []string{"nodeName \"node-z\""},
		},
		"Resolute's volume names and work directory": {
			user: podWith(corev1.PodSpec{Volumes: []corev1.Volume{hostPathVolume("determined-workdir", "/x")},
				Containers: []corev1.Container{{Name: "determined-container",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/run/determined/workdir"}}}}}),
			check: func(t *testing.T, p *corev1.Pod) {
				if v := p.Spec.Volumes[len(p.Spec.Volumes)-1]; v.Name != "determined-workdir" || v.EmptyDir == nil {
					t.Errorf("work directory volume = %+v, want Resolute's emptyDir", v)
				}
				expect(t, "mounts", len(p.Spec.Containers[0].VolumeMounts), 1)
			},
			wantWarns: []string{"volume determined-workdir", "volume mount data"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			r.UserPodSpec = tt.user
			_, pods, warns, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != len(tt.wantWarns) {
				t.Errorf("warnings = %q, want %d like %q", warns, len(tt.wantWarns), tt.wantWarns)
			}
			for _, w := range tt.wantWarns {
				if !slices.ContainsFunc(warns, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("warnings = %q, want one about %q", warns, w)
				}
			}
			for _, p := range pods {
				if tt.check != nil {
					tt.check(t, p)
				}
				checkValid(t, p.ObjectMeta)
			}
		})
	}
}

func expect[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func envValue(p *corev1.Pod, name string) string {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return "<unset>"
}

func TestBuildPodsEnv(t *testing.T) {
	tests := map[string]struct {
		change      func(*PodRequest)
		wantCommand []string
		wantEnv     map[string]string // "<unset>" for absent
	}{
		"PYTHONPATH entries go before the task's, relative ones in the work directory": {
			change: func(r *PodRequest) {
				r.Spec.PythonPath = []string{"harness", "/opt/lib"}
				r.Spec.Env["PYTHONPATH"] = "/usr/local/site"
			},
			wantEnv: map[string]string{"PYTHONPATH": "/run/determined/workdir/harness:/opt/lib:/usr/local/site"},
		},
		"no PYTHONPATH unless asked for": {
			wantEnv: map[string]string{"PYTHONPATH": "<unset>"},
		},
		"the task's own DET_SLOT_IDS and CUDA_VISIBLE_DEVICES are Resolute's to set": {
			change: func(r *PodRequest) {
				r.Spec.Env["DET_SLOT_IDS"] = "[5]"
				r.Spec.Env["CUDA_VISIBLE_DEVICES"] = "5"
			},
			wantEnv: map[string]string{"DET_SLOT_IDS": "[0,1,2,3,4,5,6,7]", "CUDA_VISIBLE_DEVICES": "<unset>"},
		},
		"a pod with GPUs leaves NVIDIA_VISIBLE_DEVICES to the device plugin": {
			wantEnv: map[string]string{"NVIDIA_VISIBLE_DEVICES": "<unset>", "DET_KUBERNETES_JOB_PARALLELISM": "2"},
		},
		"a task without slots sees no GPU": {
			change: func(r *PodRequest) {
				r.Slots, r.Nodes, r.PodSlots = 0, []string{"node-a"}, nil
			},
			wantEnv: map[string]string{"NVIDIA_VISIBLE_DEVICES": "void", "DET_SLOT_IDS": "[]", "DET_KUBERNETES_JOB_PARALLELISM": "1"},
		},
		"a shell command runs under sh -c": {
			change:      func(r *PodRequest) { onePod(r); r.Spec.Entrypoint, r.Spec.Shell = nil, "echo $HOME && ls" },
			wantCommand: []string{"sh", "-c", "echo $HOME && ls"},
		},
		"a relative entrypoint is the work directory's file": {
			change:      func(r *PodRequest) { onePod(r); r.Spec.Entrypoint = []string{"./run.sh", "./arg"} },
			wantCommand: []string{"/run/determined/workdir/run.sh", "./arg"},
		},
		"a bare entrypoint is looked up in PATH": {
			change:      func(r *PodRequest) { onePod(r); r.Spec.Entrypoint = []string{"python3", "train.py"} },
			wantCommand: []string{"python3", "train.py"},
		},
		"pods without the harness's rendezvous run the task at once": {
			change: func(r *PodRequest) {
				r.Rendezvous, r.Spec.Entrypoint, r.Spec.Shell = false, nil, "echo $HOME && ls"
			},
			wantCommand: []string{"sh", "-c", "echo $HOME && ls"},
		},
		"the pods of a gang meet at the rendezvous before the task": {
			change: func(r *PodRequest) { r.Spec.Entrypoint, r.Spec.Shell = nil, "echo $HOME && ls" },
			wantCommand: []string{"sh", "-c", `exec "${DET_PYTHON_EXECUTABLE:-python3}" -m determined.exec.rendezvous -- "$@"`,
				"rendezvous", "sh", "-c", "echo $HOME && ls"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			if tt.change != nil {
				tt.change(&r)
			}
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.wantEnv {
				expect(t, k, envValue(pods[0], k), want)
			}
			if tt.wantCommand != nil {
				if diff := cmp.Diff(tt.wantCommand, pods[0].Spec.Containers[0].Command); diff != "" {
					t.Errorf("command (-want +got):\n%s", diff)
				}
			}
			c := pods[0].Spec.Containers[0]
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.Value != "" {
					t.Errorf("env %s has both a value and valueFrom", e.Name)
				}
			}
			want := map[string]string{"DET_AGENT_ID": "spec.nodeName", "DET_KUBERNETES_POD_IP": "status.podIP"}
			for _, e := range c.Env {
				if path, ok := want[e.Name]; ok {
					if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != path {
						t.Errorf("%s = %+v, want the downward API's %s", e.Name, e.ValueFrom, path)
					}
					delete(want, e.Name)
				}
			}
			if len(want) > 0 {
				t.Errorf("env lacks %v", want)
			}
		})
	}
}

func TestBuildPodsCoscheduler(t *testing.T) {
	tests := map[string]struct {
		change     func(*PodRequest)
		wantSched  string
		wantLabels map[string]string // "<unset>" for absent
	}{
		"a GPU trial gets the coscheduler and its pod group": {
			wantSched: "coscheduler",
			wantLabels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "trial-12-1",
				"pod-group.scheduling.sigs.k8s.io/min-available": "2"},
		},
		"a command is left to the default scheduler": {
			change: func(r *PodRequest) {
				r.TaskType, r.Slots, r.Nodes, r.PodSlots = "COMMAND", 1, []string{"node-a"}, [][]int{{3}}
			},
			wantLabels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "<unset>"},
		},
		"a trial without slots is left alone": {
			change: func(r *PodRequest) { r.Slots, r.Nodes, r.PodSlots = 0, []string{"node-a"}, nil },
			wantLabels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "<unset>",
				"pod-group.scheduling.sigs.k8s.io/min-available": "<unset>"},
		},
		"without the coscheduler configured nothing is set": {
			change:     func(r *PodRequest) { r.DefaultScheduler = "" },
			wantLabels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "<unset>"},
		},
		"the user's scheduler and pod group win": {
			change: func(r *PodRequest) {
				r.UserPodSpec = &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "my-group"}},
					Spec:       corev1.PodSpec{SchedulerName: "default-scheduler"},
				}
			},
			wantSched: "default-scheduler",
			wantLabels: map[string]string{"pod-group.scheduling.sigs.k8s.io/name": "my-group",
				"pod-group.scheduling.sigs.k8s.io/min-available": "2"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			r.DefaultScheduler = "coscheduler"
			if tt.change != nil {
				tt.change(&r)
			}
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				expect(t, "schedulerName", p.Spec.SchedulerName, tt.wantSched)
				for k, want := range tt.wantLabels {
					got, ok := p.Labels[k]
					if !ok {
						got = "<unset>"
					}
					expect(t, k, got, want)
				}
				checkValid(t, p.ObjectMeta)
			}
		})
	}
}

func TestBuildPodsNodeAffinity(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: "In", Values: []string{"antarctica-west1"}}
	pin := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: "In", Values: []string{"node-a"}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}
	tests := map[string]struct {
		def  *corev1.Pod
		want *corev1.NodeAffinity
	}{
		"no affinity gets one term": {
			want: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{pin}}}}},
		},
		"the node is ANDed into every term of a pool's affinity": {
			def: podWith(corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{zone}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: "Exists"}}},
				}},
				PreferredDuringSchedulingIgnoredDuringExecution: preferred,
			}}}),
			want: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{pin}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: "Exists"}}, MatchFields: []corev1.NodeSelectorRequirement{pin}},
				}},
				PreferredDuringSchedulingIgnoredDuringExecution: preferred,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			r.DefaultPodSpec = tt.def
			_, pods, _, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, pods[0].Spec.Affinity.NodeAffinity); diff != "" {
				t.Errorf("node affinity of the first pod (-want +got):\n%s", diff)
			}
			second := pods[1].Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			for _, term := range second {
				if f := term.MatchFields; len(f) != 1 || f[0].Values[0] != "node-b" {
					t.Errorf("second pod's term %+v, want it pinned to node-b alone", term)
				}
			}
			if tt.def != nil && len(tt.def.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields) > 0 {
				t.Error("BuildPods changed the default pod spec's affinity")
			}
		})
	}
}

func TestBuildPodsCPUSlotType(t *testing.T) {
	r := trialRequest()
	r.SlotType, r.CPUPerSlot = "cpu", resource.MustParse("500m")
	r.Slots, r.MaxSlotsPerPod = 8, 4
	r.PodSlots = [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	r.UserPodSpec = podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("4Gi")},
			Limits:   corev1.ResourceList{"cpu": resource.MustParse("1")},
		}}}})
	_, pods, warns, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("4Gi")},
		Limits:   corev1.ResourceList{"cpu": resource.MustParse("2")},
	}
	for i, p := range pods {
		if diff := cmp.Diff(want, p.Spec.Containers[0].Resources); diff != "" {
			t.Errorf("pod %d resources (-want +got):\n%s", i, diff)
		}
		expect(t, "NVIDIA_VISIBLE_DEVICES", envValue(p, "NVIDIA_VISIBLE_DEVICES"), "void")
	}
	expect(t, "slots annotation", pods[1].Annotations["resolute.ai/slots"], "4,5,6,7")
	expect(t, "DET_SLOT_IDS", envValue(pods[1], "DET_SLOT_IDS"), "[4,5,6,7]")
	if len(warns) != 2 || !strings.Contains(warns[0], "cpu request 1") || !strings.Contains(warns[1], "cpu limit 1") {
		t.Errorf("warnings = %q, want the cpu request and limit overridden", warns)
	}
}

func TestBuildPodsMountsBindMountsAndStorageAsHostPaths(t *testing.T) {
	r := trialRequest()
	r.Spec.Mounts = []resolute.Mount{{HostPath: "/mnt/data", ContainerPath: "/data", ReadOnly: true},
		{HostPath: "/mnt/checkpoints", ContainerPath: "/mnt/checkpoints"}}
	_, pods, _, err := BuildPods(r)
	if err != nil {
		t.Fatal(err)
	}
	p := pods[0]
	vols := map[string]string{}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			vols[v.Name] = v.HostPath.Path
		}
	}
	var got []string
	for _, m := range container(p, TaskContainerName).VolumeMounts {
		if path, ok := vols[m.Name]; ok {
			got = append(got, fmt.Sprintf("%s->%s ro=%v", path, m.MountPath, m.ReadOnly))
		}
	}
	want := []string{"/mnt/data->/data ro=true", "/mnt/checkpoints->/mnt/checkpoints ro=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host path mounts (-want +got):\n%s", diff)
	}
}

// onePod makes trialRequest's two-pod trial a one-pod one.
func onePod(r *PodRequest) {
	r.Slots, r.Nodes, r.PodSlots = 8, r.Nodes[:1], r.PodSlots[:1]
}

// TestBuildPodsRunAsTheLinkedAgentUser: a linked owner's pods run their
// work directory's unpacking and the task as the link's uid and gid, over
// whatever the pod specs say there; an unlinked owner's keep the image's
// user (their default ids mean nothing in an image).
func TestBuildPodsRunAsTheLinkedAgentUser(t *testing.T) {
	tests := map[string]struct {
		runAs     resolute.TaskUser
		user      *corev1.Pod
		want      *corev1.SecurityContext
		wantWarns int
	}{
		"a linked owner's tasks run as the link": {
			runAs: resolute.TaskUser{UID: 1001, GID: 1002, User: "ann", Group: "ml", Linked: true},
			want:  &corev1.SecurityContext{RunAsUser: ptr(int64(1001)), RunAsGroup: ptr(int64(1002))},
		},
		"the link wins over a pod spec's root, which is warned of, and the rest of the securityContext stays": {
			runAs: resolute.TaskUser{UID: 1001, GID: 1002, User: "ann", Group: "ml", Linked: true},
			user: podWith(corev1.PodSpec{Containers: []corev1.Container{{Name: "determined-container",
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0)), ReadOnlyRootFilesystem: ptr(true)}}}}),
			want:      &corev1.SecurityContext{RunAsUser: ptr(int64(1001)), RunAsGroup: ptr(int64(1002)), ReadOnlyRootFilesystem: ptr(true)},
			wantWarns: 1,
		},
		"an unlinked owner's default ids are not used": {
			runAs: resolute.TaskUser{UID: 2_000_000_003, GID: 2_000_000_003, User: "bo", Group: "bo"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := trialRequest()
			r.Spec.RunAs, r.UserPodSpec = tt.runAs, tt.user
			_, pods, warns, err := BuildPods(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != tt.wantWarns {
				t.Errorf("warnings = %q, want %d", warns, tt.wantWarns)
			}
			for _, p := range pods {
				if diff := cmp.Diff(tt.want, p.Spec.Containers[0].SecurityContext); diff != "" {
					t.Errorf("%s: the task container's securityContext (-want +got):\n%s", p.Name, diff)
				}
				var wantInit *corev1.SecurityContext
				if tt.runAs.Linked {
					wantInit = &corev1.SecurityContext{RunAsUser: ptr(int64(tt.runAs.UID)), RunAsGroup: ptr(int64(tt.runAs.GID))}
				}
				init := p.Spec.InitContainers[len(p.Spec.InitContainers)-1]
				if diff := cmp.Diff(wantInit, init.SecurityContext); init.Name != InitContainerName || diff != "" {
					t.Errorf("%s: %s's securityContext (-want +got):\n%s", p.Name, init.Name, diff)
				}
			}
		})
	}
}
