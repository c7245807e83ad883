package expconf

import (
	"errors"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// tcdKeys maps the keys of the master's task_container_defaults (Determined's
// names) to where they land in an experiment or task config; "" means the
// key is the master's own business (networking, Kubernetes) and is not
// merged into configs.
var tcdKeys = map[string]string{
	"image":                    "environment.image",
	"environment_variables":    "environment.environment_variables",
	"force_pull_image":         "environment.force_pull_image",
	"registry_auth":            "environment.registry_auth",
	"add_capabilities":         "environment.add_capabilities",
	"drop_capabilities":        "environment.drop_capabilities",
	"bind_mounts":              "bind_mounts",
	"devices":                  "resources.devices",
	"log_policies":             "log_policies",
	"shm_size_bytes":           "resources.shm_size",
	"cpu_pod_spec":             "",
	"gpu_pod_spec":             "",
	"checkpoint_gc_pod_spec":   "",
	"network_mode":             "",
	"dtrain_network_interface": "",
	"startup_hook":             "",
	"kubernetes":               "",
	"preemption_timeout":       "preemption_timeout",
	"cpu_image":                "",
	"gpu_image":                "",
	"work_dir":                 "",
	"slurm":                    "",
	"pbs":                      "",
	"rocm_image":               "",
	"nccl_port_range":          "",
	"gloo_port_range":          "",
	"coscheduling":             "",
	"priority_class_name":      "",
	"max_slots_per_pod":        "",
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
		dest, ok := tcdKeys[k]
		if !ok {
			errs = append(errs, FieldError{Path: "task_container_defaults." + k, Message: "unknown key" + suggest(k, known)})
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
