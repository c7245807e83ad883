package local

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
)

func TestContainerSettingsAreRefusedWithTheirKeyAndTheReason(t *testing.T) {
	size := int64(1 << 30)
	m := &Manager{}
	for name, tc := range map[string]struct {
		s    resolute.ContainerSettings
		want string // "" accepts
	}{
		"nothing asked is accepted":  {resolute.ContainerSettings{}, ""},
		"a /dev/shm size is refused": {resolute.ContainerSettings{ShmSize: &size}, "resources.shm_size is not supported on the local resource manager"},
		"a device is refused": {resolute.ContainerSettings{Devices: []resolute.Device{{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Mode: "rw"}}},
			"resources.devices is not supported on the local resource manager: tasks run as processes"},
		"an added capability is refused":  {resolute.ContainerSettings{AddCapabilities: []string{"SYS_PTRACE"}}, "environment.add_capabilities is not supported"},
		"a dropped capability is refused": {resolute.ContainerSettings{DropCapabilities: []string{"NET_RAW"}}, "environment.drop_capabilities is not supported"},
		"a pod spec is refused":           {resolute.ContainerSettings{PodSpec: true}, "environment.pod_spec is not supported on the local resource manager"},
		"registry credentials are refused": {resolute.ContainerSettings{RegistryAuth: true},
			"environment.registry_auth is not supported on the local resource manager: tasks run as processes, not in containers (no image is pulled"},
		"a forced pull is refused": {resolute.ContainerSettings{ForcePullImage: true}, "environment.force_pull_image is not supported on the local resource manager"},
	} {
		t.Run(name, func(t *testing.T) {
			err := m.CheckContainer(tc.s)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.want) {
				t.Fatalf("%v, want invalid: %s", err, tc.want)
			}
		})
	}
}

func TestBindMountsAProcessCannotBeGivenAreRefused(t *testing.T) {
	m := &Manager{}
	for name, tc := range map[string]struct {
		mounts []resolute.Mount
		want   string // "" accepts
	}{
		"a directory at its own path is taken": {[]resolute.Mount{{HostPath: "/data", ContainerPath: "/data/"}}, ""},
		"another path is refused": {[]resolute.Mount{{HostPath: "/data", ContainerPath: "/data"}, {HostPath: "/srv/ds", ContainerPath: "/ds"}},
			"bind_mounts[1]: a container_path other than host_path (/srv/ds at /ds) is not supported on the local resource manager"},
		"read-only is refused": {[]resolute.Mount{{HostPath: "/data", ContainerPath: "/data", ReadOnly: true}},
			"bind_mounts[0].read_only is not supported on the local resource manager"},
	} {
		t.Run(name, func(t *testing.T) {
			err := m.CheckMounts(tc.mounts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.want) {
				t.Fatalf("%v, want invalid: %s", err, tc.want)
			}
		})
	}
}
