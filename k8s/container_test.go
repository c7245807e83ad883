package k8s_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/k8s"
)

func TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	shm := int64(2 << 30)
	s := e.spec("command-21.1", "true", nil)
	s.TaskType = resolute.TaskCommand
	// The pod spec's own /dev/shm gives way to the config's.
	s.PodSpec = map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "determined-container",
			"volumeMounts":    []any{map[string]any{"name": "small", "mountPath": "/dev/shm"}},
			"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"NET_ADMIN"}}}}},
		"volumes": []any{map[string]any{"name": "small", "emptyDir": map[string]any{}}},
	}}
	s.Container = resolute.ContainerSettings{ShmSize: &shm,
		Devices: []resolute.Device{
			{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Mode: "mrw"},
			{HostPath: "/dev/random", ContainerPath: "/dev/hwrng", Mode: "r"}},
		AddCapabilities: []string{"cap_sys_ptrace", "IPC_LOCK"}, DropCapabilities: []string{"NET_RAW"}}
	if err := e.m.CheckContainer(s.Container); err != nil {
		t.Fatal(err)
	}
	launch(t, e.m, s)

	pods, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocationID + "=" + s.AllocationID})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods %v, %v", pods, err)
	}
	p := pods.Items[0]
	c := p.Spec.Containers[0]
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range p.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	shmMount, ok := mounts["/dev/shm"]
	if !ok {
		t.Fatalf("no mount at /dev/shm: %v", c.VolumeMounts)
	}
	ed := volumes[shmMount.Name].EmptyDir
	if ed == nil || ed.Medium != corev1.StorageMediumMemory || ed.SizeLimit == nil || ed.SizeLimit.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("/dev/shm is %s: %+v, want a memory-backed emptyDir of 2Gi", shmMount.Name, volumes[shmMount.Name])
	}
	for at, want := range map[string]struct {
		host     string
		readOnly bool
	}{"/dev/fuse": {"/dev/fuse", false}, "/dev/hwrng": {"/dev/random", true}} {
		m, ok := mounts[at]
		if !ok {
			t.Errorf("no mount at %s: %v", at, c.VolumeMounts)
			continue
		}
		if hp := volumes[m.Name].HostPath; hp == nil || hp.Path != want.host || m.ReadOnly != want.readOnly {
			t.Errorf("%s: volume %+v read-only %v, want host path %s read-only %v", at, volumes[m.Name], m.ReadOnly, want.host, want.readOnly)
		}
	}
	if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
		t.Fatalf("no capabilities in %+v", c.SecurityContext)
	}
	got := c.SecurityContext.Capabilities
	want := &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "SYS_PTRACE", "IPC_LOCK"}, Drop: []corev1.Capability{"NET_RAW"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("capabilities (-want +got):\n%s", d)
	}
}

func TestContainerSettingsAPodCannotExpressAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	zero := int64(0)
	for name, tc := range map[string]struct {
		s    resolute.ContainerSettings
		want string
	}{
		"a device mode with letters other than r, w and m": {resolute.ContainerSettings{Devices: []resolute.Device{
			{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Mode: "rwx"}}}, "resources.devices[0].mode"},
		"a relative device path": {resolute.ContainerSettings{Devices: []resolute.Device{
			{HostPath: "fuse", ContainerPath: "fuse", Mode: "rw"}}}, "must be absolute"},
		"a capability that is no name": {resolute.ContainerSettings{AddCapabilities: []string{"sys admin"}}, "environment.add_capabilities[0]"},
		"an empty /dev/shm":            {resolute.ContainerSettings{ShmSize: &zero}, "resources.shm_size"},
	} {
		err := e.m.CheckContainer(tc.s)
		if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.want) {
			t.Errorf("%s: %v, want invalid naming %s", name, err, tc.want)
		}
	}
}

// TestATrialKeptOnOneNodeMustFitOnePod: resources.is_single_node: true
// refuses a trial of more slots than one pod holds (max_slots_per_pod, 8
// here), whose pods could land on several nodes.
func TestATrialKeptOnOneNodeMustFitOnePod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	if err := e.m.CheckSingleNode(8); err != nil {
		t.Fatalf("8 slots fit one pod: %v", err)
	}
	err := e.m.CheckSingleNode(9)
	if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), "resources.is_single_node: true cannot hold 9 slots_per_trial here") {
		t.Fatalf("9 slots: %v", err)
	}
}
