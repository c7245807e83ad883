package expconf

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// docsOrder is the order of an expanded config's sections on screen: what
// the experiment is and trains (metadata, entrypoint, hyperparameters,
// searcher, resources) first, then the rest in the order of Determined's
// experiment configuration reference. Sections it does not name follow,
// sorted.
var docsOrder = []string{
	"name", "description", "labels", "workspace", "project", "data", "entrypoint",
	"hyperparameters", "searcher", "resources",
	"scheduling_unit", "records_per_epoch", "max_restarts", "log_policies",
	"min_validation_period", "perform_initial_validation", "min_checkpoint_period", "checkpoint_policy",
	"checkpoint_storage", "bind_mounts", "environment", "optimizations", "reproducibility", "profiling",
	"retention_policy", "integrations", "preemption_timeout", "debug",
}

// sectionOrder is the order of the keys of a section, as Determined's
// reference lists them; keys it does not name follow, sorted.
var sectionOrder = map[string][]string{
	"searcher": {"name", "metric", "smaller_is_better", "max_trials", "max_length", "max_concurrent_trials",
		"mode", "max_rungs", "divisor", "num_rungs", "stop_once", "source_trial_id", "source_checkpoint_uuid"},
	"resources": {"slots_per_trial", "max_slots", "weight", "priority", "resource_pool", "shm_size", "devices", "is_single_node"},
	"environment": {"image", "environment_variables", "pod_spec", "force_pull_image", "registry_auth",
		"add_capabilities", "drop_capabilities", "proxy_ports"},
	"checkpoint_storage": {"type", "host_path", "storage_path", "container_path", "bucket", "prefix",
		"save_experiment_best", "save_trial_best", "save_trial_latest"},
	"min_validation_period": {"batches", "epochs"},
	"min_checkpoint_period": {"batches", "epochs"},
	// a hyperparameter
	"hyperparameters.*": {"type", "val", "vals", "minval", "maxval", "base", "count"},
}

// OrderedYAML renders an expanded config (JSON, as stored) as YAML in the
// order a person reads it: sections as docsOrder, their keys as
// sectionOrder, and the hyperparameters in the order the submitted config
// (original, YAML) wrote them. Secrets must be masked before.
func OrderedYAML(expanded []byte, original string) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(expanded, &doc); err != nil {
		return "", fmt.Errorf("reading the config: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("reading the config: not a map")
	}
	plain(&doc)
	root := doc.Content[0]
	sortMap(root, docsOrder)
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, v := root.Content[i].Value, root.Content[i+1]
		if v.Kind != yaml.MappingNode {
			continue
		}
		if key == "hyperparameters" {
			sortMap(v, writtenHparams(original))
			orderHparams(v)
			continue
		}
		sortMap(v, sectionOrder[key])
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("writing the config: %w", err)
	}
	return out.String(), nil
}

// orderHparams puts each hyperparameter's keys in the reference's order,
// down nested hyperparameters.
func orderHparams(m *yaml.Node) {
	for i := 1; i < len(m.Content); i += 2 {
		if h := m.Content[i]; h.Kind == yaml.MappingNode {
			sortMap(h, sectionOrder["hyperparameters.*"])
			if !hasKey(h, "type") {
				orderHparams(h) // a nested group of hyperparameters
			}
		}
	}
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// writtenHparams are the hyperparameters' names in the order the submitted
// config writes them (none when it cannot be read).
func writtenHparams(original string) []string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(original), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "hyperparameters" && root.Content[i+1].Kind == yaml.MappingNode {
			var names []string
			for j := 0; j < len(root.Content[i+1].Content); j += 2 {
				names = append(names, root.Content[i+1].Content[j].Value)
			}
			return names
		}
	}
	return nil
}

// sortMap orders a mapping node's keys: those in order first, as order
// lists them, then the others sorted.
func sortMap(m *yaml.Node, order []string) {
	type pair struct{ k, v *yaml.Node }
	pairs := make([]pair, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		pairs = append(pairs, pair{m.Content[i], m.Content[i+1]})
	}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		if ra, rb := rank(a.k.Value), rank(b.k.Value); ra != rb {
			return ra - rb
		}
		if rank(a.k.Value) < len(order) {
			return 0
		}
		return strings.Compare(a.k.Value, b.k.Value)
	})
	m.Content = m.Content[:0]
	for _, p := range pairs {
		m.Content = append(m.Content, p.k, p.v)
	}
}

// plain drops the JSON's flow style, so the YAML is in block style.
func plain(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plain(c)
	}
}

// UnusedOn are the expanded config's keys (section.key) that have no effect
// under a resource manager (local or kubernetes): the local one runs tasks
// as processes, without containers.
func UnusedOn(resourceManager string) map[string]string {
	if resourceManager == "kubernetes" {
		return nil
	}
	const why = "not in effect: the local resource manager runs tasks without containers"
	return map[string]string{"environment.image": why, "environment.pod_spec": why,
		"environment.force_pull_image": why, "environment.registry_auth": why}
}
