package expconf

import (
	"errors"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// tcdKeys maps the keys of the master's task_container_defaults (Determined's
// names) to where they land in an experiment or task config; "" means the
// key is the master's own business (the Kubernetes resource manager reads the
// pod specs, see cmd/server/kubernetes.go) and is not merged into configs.
// Keys Resolute has no use for are in tcdRefused instead.
var tcdKeys = map[string]string{
	"image":                  "environment.image",
	"cpu_image":              "environment.image.cpu",
	"gpu_image":              "environment.image.cuda",
	"rocm_image":             "environment.image.rocm",
	"environment_variables":  "environment.environment_variables",
	"force_pull_image":       "environment.force_pull_image",
	"registry_auth":          "environment.registry_auth",
	"add_capabilities":       "environment.add_capabilities",
	"drop_capabilities":      "environment.drop_capabilities",
	"bind_mounts":            "bind_mounts",
	"devices":                "resources.devices",
	"log_policies":           "log_policies",
	"shm_size_bytes":         "resources.shm_size",
	"preemption_timeout":     "preemption_timeout",
	"cpu_pod_spec":           "",
	"gpu_pod_spec":           "",
	"checkpoint_gc_pod_spec": "",
}

// tcdRefused are Determined's task_container_defaults keys that Resolute
// does not support, each with the reason, so that a master.yaml brought from
// Determined fails at start-up rather than meaning less than it says.
var tcdRefused = map[string]string{
	"network_mode":             "not supported: tasks use the host's network on the local resource manager and the pod's on Kubernetes",
	"dtrain_network_interface": "not supported: distributed training finds its interface itself (set NCCL_SOCKET_IFNAME in environment_variables)",
	"nccl_port_range":          "not supported: set NCCL's own variables in environment_variables",
	"gloo_port_range":          "not supported: set Gloo's own variables in environment_variables",
	"startup_hook":             "not supported: put a startup-hook.sh in the experiment's context directory",
	"work_dir":                 "not supported: tasks start in their context directory",
	"kubernetes":               "not supported: set the Kubernetes resource manager's keys under resource_manager",
	"coscheduling":             "not supported: set resource_manager.default_scheduler to coscheduler",
	"priority_class_name":      "not supported: a task's resources.priority chooses its PriorityClass",
	"max_slots_per_pod":        "not supported here: set resource_manager.max_slots_per_pod",
	"slurm":                    "not supported by Resolute (a Determined Enterprise Edition HPC launcher key)",
	"pbs":                      "not supported by Resolute (a Determined Enterprise Edition HPC launcher key)",
}

// TaskContainerDefaultKeys lists the keys task_container_defaults accepts
// and those it refuses, for the audit of config keys (configkeys).
func TaskContainerDefaultKeys() (accepted, refused []string) {
	for k := range tcdKeys {
		accepted = append(accepted, k)
	}
	for k := range tcdRefused {
		refused = append(refused, k)
	}
	sort.Strings(accepted)
	sort.Strings(refused)
	return accepted, refused
}

// MasterDefaults turns the master's checkpoint_storage and
// task_container_defaults into the lowest config layer, shaped like an
// experiment config, and checks both: an unknown key or a bad value is an
// error whose path starts at the master config's key.
func MasterDefaults(checkpointStorage, taskContainerDefaults map[string]any) ([]byte, error) {
	layer := map[string]any{}
	var errs Errors
	if checkpointStorage != nil {
		layer["checkpoint_storage"] = checkpointStorage
	}
	keys := make([]string, 0, len(taskContainerDefaults))
	for k := range taskContainerDefaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	known := make([]string, 0, len(tcdKeys))
	for k := range tcdKeys {
		known = append(known, k)
	}
	for _, k := range keys {
		if why, refused := tcdRefused[k]; refused {
			errs = append(errs, FieldError{Path: "task_container_defaults." + k, Message: why})
			continue
		}
		dest, ok := tcdKeys[k]
		if !ok {
			errs = append(errs, FieldError{Path: "task_container_defaults." + k, Message: "unknown key" + suggest(k, known)})
			continue
		}
		if strings.HasPrefix(dest, "environment.image.") && taskContainerDefaults["image"] != nil {
			errs = append(errs, FieldError{Path: "task_container_defaults." + k, Message: "give image or cpu_image/gpu_image/rocm_image, not both"})
			continue
		}
		if dest != "" {
			setPath(layer, dest, taskContainerDefaults[k])
		}
	}
	data, err := yaml.Marshal(layer)
	if err != nil {
		return nil, err
	}
	if _, err := ParseExperiment(data); err != nil {
		var parseErrs Errors
		if !errors.As(err, &parseErrs) {
			return nil, err
		}
		for _, e := range parseErrs {
			e.Line = 0 // lines of the generated layer mean nothing to people
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return data, nil
}

func setPath(m map[string]any, path string, v any) {
	for {
		key, rest, more := strings.Cut(path, ".")
		if !more {
			m[key] = v
			return
		}
		child, ok := m[key].(map[string]any)
		if !ok {
			child = map[string]any{}
			m[key] = child
		}
		m, path = child, rest
	}
}
