package control

import (
	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// containerOf is what a config asks of its task's container beyond the
// image and mounts: resources.shm_size, resources.devices and
// environment.add_capabilities/drop_capabilities, and whether it gives
// environment.pod_spec, registry_auth or force_pull_image.
func containerOf(r expconf.ResourcesConfig, env expconf.EnvironmentConfig) resolute.ContainerSettings {
	c := resolute.ContainerSettings{ShmSize: r.ShmSize, PodSpec: env.PodSpec != nil,
		RegistryAuth: env.RegistryAuth != nil, ForcePullImage: env.ForcePullImage}
	for _, d := range r.Devices {
		c.Devices = append(c.Devices, resolute.Device{HostPath: d.HostPath, ContainerPath: d.ContainerPath, Mode: d.Mode})
	}
	if len(env.AddCapabilities) > 0 {
		c.AddCapabilities = env.AddCapabilities
	}
	if len(env.DropCapabilities) > 0 {
		c.DropCapabilities = env.DropCapabilities
	}
	return c
}

// mountChecker is a resource manager that cannot give every bind mount (the
// local one: its tasks see the host's own paths).
type mountChecker interface {
	CheckMounts([]resolute.Mount) error
}

// singleNoder is a resource manager that may spread a trial over several
// nodes (Kubernetes: pods of max_slots_per_pod slots each).
type singleNoder interface {
	CheckSingleNode(slots int) error
}

// checkSingleNode refuses a trial that resources.is_single_node keeps on one
// node but that the resource manager would spread over several. A resource
// manager that is one machine (the local one) always keeps it there.
func (c *core) checkSingleNode(r expconf.ResourcesConfig) error {
	if sn, ok := c.rm.(singleNoder); ok && r.IsSingleNode != nil && *r.IsSingleNode {
		return sn.CheckSingleNode(r.SlotsPerTrial)
	}
	return nil
}

// checkRuntime refuses, at submission, what the config asks that this
// master cannot give its tasks: container settings the resource manager
// cannot apply, and proxy ports it will not expose (see checkProxyPorts).
func (c *core) checkRuntime(r expconf.ResourcesConfig, env expconf.EnvironmentConfig, bms []expconf.BindMount) error {
	if err := checkProxyPorts(env.ProxyPorts); err != nil {
		return err
	}
	if mc, ok := c.rm.(mountChecker); ok && len(bms) > 0 {
		if err := mc.CheckMounts(mountsOf(bms, nil)); err != nil {
			return err
		}
	}
	if s := containerOf(r, env); !s.Empty() {
		return c.rm.CheckContainer(s)
	}
	return nil
}

// checkProxyPorts refuses unauthenticated proxy ports: the master proxies a
// task's ports only to the task's owner, through the same signed-in
// websocket as its shells' SSH (det task tunnel, every port) or, for
// proxy_tcp: false (Determined's default), over HTTP on the task origin at
// /proxy/TASK:PORT/ with a ticket, and never opens a task's port to anyone
// who asks.
func checkProxyPorts(pps []expconf.ProxyPort) error {
	for i, pp := range pps {
		if pp.DefaultServiceID {
			return resolute.Errorf(resolute.EInvalid, "environment.proxy_ports[%d].default_service_id: true is not supported: "+
				"a task's proxy ports are opened at /proxy/TASK:PORT/ or with det task tunnel ID PORT, never as the task's own page; remove it", i)
		}
		if pp.Unauthenticated {
			return resolute.Errorf(resolute.EInvalid, "environment.proxy_ports[%d].unauthenticated: true is not supported: "+
				"Resolute proxies a task's ports only to its owner, signed in (det task tunnel, /proxy/TASK:PORT/); remove it or set it to false", i)
		}
	}
	return nil
}
