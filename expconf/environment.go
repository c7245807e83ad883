package expconf

import (
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultImage is the task image when a config and the cluster defaults name
// none: Determined 0.38's default, so users' habits carry over.
const DefaultImage = "determinedai/pytorch-ngc-dev:0736b6d"

// Bind mount propagation and device mode defaults.
const (
	DefaultPropagation = "rprivate"
	DefaultDeviceMode  = "mrw"
)

// EnvironmentConfig is the `environment` section, with the per-device forms
// of image and environment_variables expanded.
type EnvironmentConfig struct {
	Image                DeviceImages
	EnvironmentVariables DeviceEnv
	// PodSpec is a Kubernetes v1.Pod as plain YAML values; the k8s package
	// decodes and merges it.
	PodSpec          map[string]any
	RegistryAuth     *RegistryAuth
	ForcePullImage   bool
	AddCapabilities  []string
	DropCapabilities []string
	ProxyPorts       []ProxyPort
}

// DeviceImages is one image per device type (`gpu` in YAML is an alias of
// cuda).
type DeviceImages struct {
	CPU, CUDA, ROCm string
}

// DeviceEnv is the environment variables ("K=V") per device type. The list
// form of environment_variables applies to all three.
type DeviceEnv struct {
	CPU, CUDA, ROCm []string
}

// RegistryAuth is Docker's AuthConfig for pulling the image.
type RegistryAuth struct {
	Username, Password, Auth, Email, ServerAddress string
}

// ProxyPort is a port of the task that the master proxies.
type ProxyPort struct {
	Port             int
	ProxyTCP         bool
	Unauthenticated  bool
	DefaultServiceID bool
}

// BindMount is a host directory mounted into the task container.
type BindMount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
	Propagation   string // default rprivate
}

// Device is a host device exposed to the container.
type Device struct {
	HostPath      string
	ContainerPath string
	Mode          string // default mrw
}

func (d *decoder) environment(n *yaml.Node, p string) EnvironmentConfig {
	o := d.object(n, p)
	env := EnvironmentConfig{
		Image:                DeviceImages{CPU: DefaultImage, CUDA: DefaultImage, ROCm: DefaultImage},
		EnvironmentVariables: DeviceEnv{CPU: []string{}, CUDA: []string{}, ROCm: []string{}},
		AddCapabilities:      []string{},
		DropCapabilities:     []string{},
	}
	if img := o.take("image"); img != nil {
		if img.Kind == yaml.ScalarNode {
			if s, ok := d.scalarString(img, join(p, "image")); ok {
				if s == "" {
					d.fail(img, join(p, "image"), "must not be empty")
				}
				env.Image = DeviceImages{CPU: s, CUDA: s, ROCm: s}
			}
		} else {
			io := d.object(img, join(p, "image"))
			io.str("cpu", &env.Image.CPU)
			if io.str("gpu", &env.Image.CUDA) && io.has("cuda") {
				d.fail(io.take("gpu"), join(p, "image.gpu"), "give cuda or its old name gpu, not both")
			}
			io.str("cuda", &env.Image.CUDA)
			io.str("rocm", &env.Image.ROCm)
			io.done()
		}
	}
	if ev := o.take("environment_variables"); ev != nil {
		evp := join(p, "environment_variables")
		if ev.Kind == yaml.SequenceNode {
			items, _ := d.list(ev, evp)
			vars := d.envVars(d.strings(items, evp), items, evp)
			env.EnvironmentVariables = DeviceEnv{CPU: vars, CUDA: vars, ROCm: vars}
		} else {
			eo := d.object(ev, evp)
			read := func(key string) []string {
				items, ok := eo.list(key)
				if !ok {
					return []string{}
				}
				return d.envVars(d.strings(items, join(evp, key)), items, join(evp, key))
			}
			env.EnvironmentVariables.CPU = read("cpu")
			env.EnvironmentVariables.CUDA = read("cuda")
			if eo.has("gpu") {
				if eo.has("cuda") {
					d.fail(eo.take("gpu"), join(evp, "gpu"), "give cuda or its old name gpu, not both")
				}
				env.EnvironmentVariables.CUDA = read("gpu")
			}
			env.EnvironmentVariables.ROCm = read("rocm")
			eo.done()
		}
	}
	// ROCm's own image and variables (not those every device shares) are
	// kept: Resolute offers no ROCm slots to use them.
	if r := env.Image.ROCm; r != DefaultImage && r != env.Image.CPU && r != env.Image.CUDA {
		d.warn(join(p, "image.rocm"), "kept with the config only: Resolute schedules no ROCm devices")
	}
	if r := env.EnvironmentVariables.ROCm; len(r) > 0 && !slices.Equal(r, env.EnvironmentVariables.CPU) && !slices.Equal(r, env.EnvironmentVariables.CUDA) {
		d.warn(join(p, "environment_variables.rocm"), "kept with the config only: Resolute schedules no ROCm devices")
	}
	env.PodSpec = o.freeForm("pod_spec")
	if ra := o.take("registry_auth"); ra != nil {
		ro := d.object(ra, join(p, "registry_auth"))
		a := &RegistryAuth{}
		ro.str("username", &a.Username)
		ro.str("password", &a.Password)
		ro.str("auth", &a.Auth)
		ro.str("email", &a.Email)
		ro.str("serveraddress", &a.ServerAddress)
		ro.reject("identitytoken", "not supported: the pull secret is made from username and password (or auth)")
		ro.reject("registrytoken", "not supported: the pull secret is made from username and password (or auth)")
		ro.done()
		env.RegistryAuth = a
	}
	o.boolean("force_pull_image", &env.ForcePullImage)
	if o.has("add_capabilities") {
		env.AddCapabilities = o.strList("add_capabilities")
	}
	o.take("add_capabilities")
	if o.has("drop_capabilities") {
		env.DropCapabilities = o.strList("drop_capabilities")
	}
	o.take("drop_capabilities")
	o.reject("ports", "not supported: nothing reads it; expose a task's ports with proxy_ports")
	if items, ok := o.list("proxy_ports"); ok {
		env.ProxyPorts = []ProxyPort{}
		for i, item := range items {
			ip := index(join(p, "proxy_ports"), i)
			io := d.object(item, ip)
			var pp ProxyPort
			if !io.integer("proxy_port", &pp.Port) && !io.has("proxy_port") {
				d.fail(io.line(), join(ip, "proxy_port"), "required")
			} else if pp.Port < 1 || pp.Port > 65535 {
				d.fail(io.take("proxy_port"), join(ip, "proxy_port"), "must be a port number 1..65535, got %d", pp.Port)
			}
			io.boolean("proxy_tcp", &pp.ProxyTCP)
			io.boolean("unauthenticated", &pp.Unauthenticated)
			io.boolean("default_service_id", &pp.DefaultServiceID)
			io.done()
			env.ProxyPorts = append(env.ProxyPorts, pp)
		}
	}
	o.done()
	return env
}

// envVars checks that each entry is NAME=VALUE.
func (d *decoder) envVars(vars []string, items []*yaml.Node, p string) []string {
	for i, v := range vars {
		name, _, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			var n *yaml.Node
			if i < len(items) {
				n = items[i]
			}
			d.fail(n, index(p, i), "expected NAME=VALUE, got %q", v)
		}
	}
	return vars
}

func (d *decoder) bindMounts(o *object, key string) []BindMount {
	out := []BindMount{}
	items, ok := o.list(key)
	if !ok {
		return out
	}
	for i, item := range items {
		ip := index(join(o.path, key), i)
		bo := d.object(item, ip)
		bm := BindMount{Propagation: DefaultPropagation}
		d.absPath(bo, "host_path", &bm.HostPath, true)
		d.absPath(bo, "container_path", &bm.ContainerPath, true)
		if bm.ContainerPath == "." || path.Clean(bm.ContainerPath) == "/" && bm.ContainerPath != "" {
			d.fail(bo.take("container_path"), join(ip, "container_path"), "must not be the container's root or working directory")
		}
		bo.boolean("read_only", &bm.ReadOnly)
		bo.str("propagation", &bm.Propagation)
		if bo.has("propagation") {
			d.propagation(bo.take("propagation"), join(ip, "propagation"), bm.Propagation)
		}
		bo.done()
		out = append(out, bm)
	}
	return out
}

// absPath reads a required path at key; host paths must be absolute.
func (d *decoder) absPath(o *object, key string, dst *string, required bool) {
	if !o.str(key, dst) {
		if required && !o.has(key) {
			d.fail(o.line(), join(o.path, key), "required")
		}
		return
	}
	if *dst == "" {
		d.fail(o.take(key), join(o.path, key), "must not be empty")
	} else if key == "host_path" && !path.IsAbs(*dst) {
		d.fail(o.take(key), join(o.path, key), "must be an absolute path, got %q", *dst)
	}
}

func (d *decoder) devices(o *object) []Device {
	items, ok := o.list("devices")
	if !ok {
		return nil
	}
	out := []Device{}
	for i, item := range items {
		ip := index(join(o.path, "devices"), i)
		if item != nil && item.Kind == yaml.ScalarNode {
			// Docker's short form host[:container[:mode]].
			s, _ := d.scalarString(item, ip)
			parts := strings.Split(s, ":")
			dev := Device{HostPath: parts[0], ContainerPath: parts[0], Mode: DefaultDeviceMode}
			if len(parts) > 1 {
				dev.ContainerPath = parts[1]
			}
			if len(parts) > 2 {
				dev.Mode = parts[2]
			}
			if len(parts) > 3 || dev.HostPath == "" || dev.ContainerPath == "" {
				d.fail(item, ip, "expected host_path[:container_path[:mode]], got %q", s)
			}
			out = append(out, dev)
			continue
		}
		do := d.object(item, ip)
		dev := Device{Mode: DefaultDeviceMode}
		d.absPath(do, "host_path", &dev.HostPath, true)
		d.absPath(do, "container_path", &dev.ContainerPath, true)
		do.str("mode", &dev.Mode)
		do.done()
		out = append(out, dev)
	}
	return out
}

func (e EnvironmentConfig) render() map[string]any {
	m := map[string]any{
		"image":                 map[string]any{"cpu": e.Image.CPU, "cuda": e.Image.CUDA, "rocm": e.Image.ROCm},
		"environment_variables": map[string]any{"cpu": e.EnvironmentVariables.CPU, "cuda": e.EnvironmentVariables.CUDA, "rocm": e.EnvironmentVariables.ROCm},
		"force_pull_image":      e.ForcePullImage,
		"add_capabilities":      e.AddCapabilities,
		"drop_capabilities":     e.DropCapabilities,
	}
	if e.PodSpec != nil {
		m["pod_spec"] = e.PodSpec
	}
	if a := e.RegistryAuth; a != nil {
		ra := map[string]any{}
		for k, v := range map[string]string{"username": a.Username, "password": a.Password, "auth": a.Auth,
			"email": a.Email, "serveraddress": a.ServerAddress} {
			if v != "" {
				ra[k] = v
			}
		}
		m["registry_auth"] = ra
	}
	if e.ProxyPorts != nil {
		pps := make([]any, 0, len(e.ProxyPorts))
		for _, pp := range e.ProxyPorts {
			pps = append(pps, map[string]any{"proxy_port": pp.Port, "proxy_tcp": pp.ProxyTCP,
				"unauthenticated": pp.Unauthenticated, "default_service_id": pp.DefaultServiceID})
		}
		m["proxy_ports"] = pps
	}
	return m
}

func renderBindMounts(bms []BindMount) []any {
	out := make([]any, 0, len(bms))
	for _, bm := range bms {
		out = append(out, map[string]any{"host_path": bm.HostPath, "container_path": bm.ContainerPath,
			"read_only": bm.ReadOnly, "propagation": bm.Propagation})
	}
	return out
}

func renderDevices(devs []Device) []any {
	out := make([]any, 0, len(devs))
	for _, dev := range devs {
		out = append(out, map[string]any{"host_path": dev.HostPath, "container_path": dev.ContainerPath, "mode": dev.Mode})
	}
	return out
}

// propagation checks a mount's propagation: Determined's values are known,
// but only private ones are supported, which is how every mount is made.
func (d *decoder) propagation(n *yaml.Node, p, v string) {
	if !d.oneOf(n, p, v, "rprivate", "private", "rshared", "shared", "rslave", "slave") {
		return
	}
	if v != "rprivate" && v != "private" {
		d.fail(n, p, "%s is not supported: Resolute mounts host directories private (rprivate; Kubernetes' None), so mounts made later on the host are not seen", v)
	}
}
