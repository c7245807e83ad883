package k8s

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resolute-ml/resolute"
)

// What the task's container is given besides (resolute.ContainerSettings),
// as Determined's pods have it: resources.shm_size is a memory-backed
// emptyDir at /dev/shm with that size limit; each of resources.devices a
// hostPath volume at its container path (read-only without w in its mode);
// the capabilities the container's securityContext adds and drops.

// shmVolume is the name of the /dev/shm volume.
const shmVolume = "determined-shm"

// shmPath is where it is mounted.
const shmPath = "/dev/shm"

// capabilityName is a Linux capability as Kubernetes names it, without
// CAP_, or ALL.
var capabilityName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// CheckContainer refuses settings a pod cannot express: a device whose
// mode is not made of r, w and m or whose paths are not absolute, and a
// capability that is not a name.
func (m *Manager) CheckContainer(s resolute.ContainerSettings) error {
	if s.ShmSize != nil && *s.ShmSize <= 0 {
		return resolute.Errorf(resolute.EInvalid, "resources.shm_size: must be a positive size, got %d", *s.ShmSize)
	}
	for i, d := range s.Devices {
		if !strings.HasPrefix(d.HostPath, "/") || !strings.HasPrefix(d.ContainerPath, "/") {
			return resolute.Errorf(resolute.EInvalid, "resources.devices[%d]: host and container paths must be absolute on Kubernetes, got %q and %q",
				i, d.HostPath, d.ContainerPath)
		}
		if d.Mode == "" || strings.Trim(d.Mode, "rwm") != "" {
			return resolute.Errorf(resolute.EInvalid, "resources.devices[%d].mode: expected letters of r, w and m, got %q", i, d.Mode)
		}
	}
	for _, list := range []struct {
		key  string
		caps []string
	}{{"environment.add_capabilities", s.AddCapabilities}, {"environment.drop_capabilities", s.DropCapabilities}} {
		for i, c := range list.caps {
			if !capabilityName.MatchString(string(capability(c))) {
				return resolute.Errorf(resolute.EInvalid, "%s[%d]: %q is not a Linux capability name (such as SYS_PTRACE or CAP_SYS_PTRACE)",
					list.key, i, c)
			}
		}
	}
	return nil
}

// capability is c as Kubernetes names it: upper case, without CAP_ (Docker
// takes both).
func capability(c string) corev1.Capability {
	c = strings.ToUpper(strings.TrimSpace(c))
	return corev1.Capability(strings.TrimPrefix(c, "CAP_"))
}

// applyContainer gives the pod s and its task container c the settings;
// they win over the pod spec's own at the same paths, with a warning.
func applyContainer(s *corev1.PodSpec, c *corev1.Container, cs resolute.ContainerSettings, w *warnings) {
	mount := func(name, at string, src corev1.VolumeSource, readOnly bool) {
		s.Volumes = slices.DeleteFunc(s.Volumes, func(v corev1.Volume) bool { return v.Name == name })
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			if m.MountPath == at {
				w.add("pod_spec: volume mount %s at %s is ignored: the config's resources mount %s there", m.Name, at, name)
				return true
			}
			return false
		})
		s.Volumes = append(s.Volumes, corev1.Volume{Name: name, VolumeSource: src})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: at, ReadOnly: readOnly})
	}
	if cs.ShmSize != nil {
		size := resource.NewQuantity(*cs.ShmSize, resource.BinarySI)
		mount(shmVolume, shmPath, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: size}}, false)
	}
	for i, d := range cs.Devices {
		mount("determined-device-"+strconv.Itoa(i), d.ContainerPath, corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: d.HostPath}}, !strings.Contains(d.Mode, "w"))
	}
	if len(cs.AddCapabilities)+len(cs.DropCapabilities) == 0 {
		return
	}
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	if c.SecurityContext.Capabilities == nil {
		c.SecurityContext.Capabilities = &corev1.Capabilities{}
	}
	caps := c.SecurityContext.Capabilities
	for _, a := range cs.AddCapabilities {
		if name := capability(a); !slices.Contains(caps.Add, name) {
			caps.Add = append(caps.Add, name)
		}
	}
	for _, d := range cs.DropCapabilities {
		if name := capability(d); !slices.Contains(caps.Drop, name) {
			caps.Drop = append(caps.Drop, name)
		}
	}
}

// CheckSingleNode refuses a trial of resources.is_single_node: true that
// needs more slots than one pod holds: its pods could land on several nodes.
func (m *Manager) CheckSingleNode(slots int) error {
	if max := m.opts.MaxSlotsPerPod; max > 0 && slots > max {
		return resolute.Errorf(resolute.EInvalid, "resources.is_single_node: true cannot hold %d slots_per_trial here: "+
			"a pod has at most %d (resource_manager.max_slots_per_pod), and the pods of a trial may land on several nodes", slots, max)
	}
	return nil
}
