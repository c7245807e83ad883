package masterconf

import "fmt"

// checkResourceManagerKeys refuses the keys of the other resource manager:
// a Kubernetes key on the local resource manager, or a local one on
// Kubernetes, would otherwise be accepted and do nothing.
func (c *Config) checkResourceManagerKeys() Errors {
	var errs Errors
	r := c.ResourceManager
	refuse := func(given bool, path, why string) {
		if given {
			errs = append(errs, FieldError{Path: path, Message: "not supported on the " + why})
		}
	}
	switch r.Type {
	case "local":
		const k8s = "local resource manager (a Kubernetes key; set resource_manager.type: kubernetes to use it)"
		refuse(r.Kubeconfig != "", "resource_manager.kubeconfig", k8s)
		refuse(r.Namespace != "", "resource_manager.namespace", k8s)
		refuse(r.DefaultNamespace != "", "resource_manager.default_namespace", k8s)
		refuse(r.MaxSlotsPerPod != 0, "resource_manager.max_slots_per_pod", k8s)
		refuse(r.SlotType != "", "resource_manager.slot_type", k8s+"; here slots are the GPUs found, else CPU slots")
		refuse(r.SlotResourceRequests.CPU != 0, "resource_manager.slot_resource_requests.cpu", k8s)
		refuse(r.DefaultScheduler != "", "resource_manager.default_scheduler", k8s)
		refuse(r.PendingTimeout != 0, "resource_manager.pending_timeout", k8s)
		errs = append(errs, podSpecKeys("", c.TaskContainerDefaults)...)
		for i, p := range c.ResourcePools {
			refuse(p.KubernetesNamespace != "", fmt.Sprintf("resource_pools[%d].kubernetes_namespace", i), k8s)
			errs = append(errs, podSpecKeys(fmt.Sprintf("resource_pools[%d].", i), p.TaskContainerDefaults)...)
		}
	case "kubernetes":
		const local = "Kubernetes resource manager (a key of the local resource manager: slots are the nodes' GPUs or CPUs)"
		refuse(r.Slots != 0, "resource_manager.slots", local)
		refuse(r.KeepWorkDirs, "resource_manager.keep_work_dirs", "Kubernetes resource manager (a key of the local resource manager: a pod's work directory goes with the pod)")
		for i, p := range c.ResourcePools {
			refuse(p.Slots != 0, fmt.Sprintf("resource_pools[%d].slots", i), local)
			refuse(len(p.SlotIDs) > 0, fmt.Sprintf("resource_pools[%d].slot_ids", i), local)
		}
	}
	return errs
}

// podSpecKeys refuses, on the local resource manager, the pod specs, image
// pulling and container settings of task_container_defaults: there are no
// pods or containers there, and as a default layer they would make every
// task refused at submission.
func podSpecKeys(prefix string, tcd map[string]any) Errors {
	var errs Errors
	for _, key := range []string{"cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec", "registry_auth", "force_pull_image",
		"add_capabilities", "drop_capabilities", "devices", "shm_size_bytes"} {
		if _, ok := tcd[key]; ok {
			errs = append(errs, FieldError{Path: prefix + "task_container_defaults." + key,
				Message: "not supported on the local resource manager (tasks run as processes: no pod, no container, no image pulled); set resource_manager.type: kubernetes to use it"})
		}
	}
	return errs
}
