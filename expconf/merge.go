package expconf

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Merge merges config layers given lowest precedence first (master
// task_container_defaults and pool defaults, then the template, then the
// user config): maps merge key by key, recursively; a list or scalar from a
// later layer replaces the earlier one; a null in a later layer leaves the
// earlier value. The inputs are not modified.
func Merge(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range layers {
		out = mergeMaps(out, l)
	}
	return out
}

func mergeMaps(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = deepCopy(v)
	}
	for k, v := range over {
		if v == nil {
			if _, ok := out[k]; !ok {
				out[k] = nil
			}
			continue
		}
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeMaps(bm, om)
		} else {
			out[k] = deepCopy(v)
		}
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// ApplyOverrides applies `det --config key.path=value` overrides on top of
// cfg, which it does not modify. Each value is read as YAML, so `5` is an
// integer, `true` a boolean and `[a, b]` a list; the overrides win over
// every layer.
func ApplyOverrides(cfg map[string]any, overrides []string) (map[string]any, error) {
	layer, err := overridesLayer(overrides)
	if err != nil {
		return nil, err
	}
	return Merge(cfg, layer), nil
}

func overridesLayer(overrides []string) (map[string]any, error) {
	layer := map[string]any{}
	var errs Errors
	for _, ov := range overrides {
		key, raw, ok := strings.Cut(ov, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			errs = append(errs, FieldError{Path: "--config", Message: fmt.Sprintf("expected key.path=value, got %q", ov)})
			continue
		}
		var v any
		if err := yaml.Unmarshal([]byte(raw), &v); err != nil {
			errs = append(errs, FieldError{Path: key, Message: fmt.Sprintf("cannot read override value %q: %v", raw, err)})
			continue
		}
		parts := strings.Split(key, ".")
		m := layer
		for i, p := range parts {
			if p == "" {
				errs = append(errs, FieldError{Path: key, Message: "empty segment in override key"})
				break
			}
			if i == len(parts)-1 {
				m[p] = v
				break
			}
			next, isMap := m[p].(map[string]any)
			if !isMap {
				if _, exists := m[p]; exists {
					errs = append(errs, FieldError{Path: key, Message: "conflicts with another override"})
					break
				}
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
	}
	if err := errs.errOrNil(); err != nil {
		return nil, err
	}
	return layer, nil
}

// ParseExperimentLayers is the whole submission path: it merges the YAML
// layers (lowest precedence first, e.g. pool defaults, template, user
// config), applies the CLI overrides on top, parses with defaults, and
// checks the eventually-required keys (Complete). Errors keep the YAML line
// of whichever layer a value came from.
func ParseExperimentLayers(layers [][]byte, overrides []string, opts ...Option) (*ExperimentConfig, error) {
	merged, err := mergeLayers(layers, overrides)
	if err != nil {
		return nil, err
	}
	c, err := decodeExperiment(merged, buildOptions(opts))
	if err != nil {
		return nil, err
	}
	if err := c.Complete(); err != nil {
		return nil, err
	}
	return c, nil
}

// ParseTaskLayers merges layers and overrides like ParseExperimentLayers and
// parses the result as the config of a task of taskType.
func ParseTaskLayers(layers [][]byte, overrides []string, taskType string) (*TaskConfig, error) {
	merged, err := mergeLayers(layers, overrides)
	if err != nil {
		return nil, err
	}
	return decodeTask(merged, taskType)
}

// ParseTemplate checks a template as one experiment config layer and
// returns it as a map to store. A template is partial: any required key,
// top-level or inside a section (e.g. checkpoint_storage.type), may be left
// to the config it is merged with; everything it does say must be valid, and
// it may not name another template.
func ParseTemplate(data []byte) (map[string]any, error) {
	if _, err := ParseExperiment(data); err != nil {
		list, ok := err.(Errors)
		if !ok {
			return nil, err
		}
		var kept Errors
		for _, fe := range list {
			if !strings.HasPrefix(fe.Message, "required") {
				kept = append(kept, fe)
			}
		}
		if err := kept.errOrNil(); err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, Errors{{Message: "invalid YAML: " + err.Error()}}
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func mergeLayers(layers [][]byte, overrides []string) (*yaml.Node, error) {
	var merged *yaml.Node
	for i, data := range layers {
		doc, err := parseDocument(data)
		if err != nil {
			var errs Errors
			for _, fe := range err.(Errors) {
				fe.Message = fmt.Sprintf("layer %d: %s", i+1, fe.Message)
				errs = append(errs, fe)
			}
			return nil, errs
		}
		merged = mergeNodes(merged, doc, 0, "")
	}
	if len(overrides) > 0 {
		layer, err := overridesLayer(overrides)
		if err != nil {
			return nil, err
		}
		var n yaml.Node
		if err := n.Encode(layer); err != nil {
			return nil, Errors{{Path: "--config", Message: err.Error()}}
		}
		merged = mergeNodes(merged, &n, 0, "")
	}
	return merged, nil
}

// unionKey names the key that says which kind a section is, for the sections
// that are unions: a later layer of another kind replaces the section whole
// (a user's s3 storage drops the master's host_path), as Determined's
// union merge does.
func unionKey(path string) string {
	switch {
	case path == "checkpoint_storage":
		return "type"
	case path == "searcher":
		return "name"
	case strings.HasPrefix(path, "hyperparameters."):
		return "type"
	}
	return ""
}

// scalarAt returns the scalar value of key in a mapping node, or "".
func scalarAt(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value
		}
	}
	return ""
}

// mergeNodes merges over onto base like Merge does for maps, keeping the
// nodes (and so the line numbers) of the layer each value came from.
func mergeNodes(base, over *yaml.Node, depth int, path string) *yaml.Node {
	d := &decoder{}
	b, o := d.resolve(base), d.resolve(over)
	if isNull(o) {
		if b == nil {
			return o
		}
		return b
	}
	if b == nil || b.Kind != yaml.MappingNode || o.Kind != yaml.MappingNode || depth > 64 {
		return o
	}
	if key := unionKey(path); key != "" {
		if bk, ok := scalarAt(b, key), scalarAt(o, key); ok != "" && bk != ok {
			return o
		}
	}
	b = azureCredentialSource(b, o, path)
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: o.Line, Column: o.Column}
	pos := map[string]int{}
	for i := 0; i+1 < len(b.Content); i += 2 {
		k := d.resolve(b.Content[i])
		if k != nil && k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
			pos[k.Value] = len(out.Content)
		}
		out.Content = append(out.Content, b.Content[i], b.Content[i+1])
	}
	for i := 0; i+1 < len(o.Content); i += 2 {
		k := d.resolve(o.Content[i])
		if k == nil {
			continue
		}
		if at, ok := pos[k.Value]; ok && k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
			out.Content[at+1] = mergeNodes(out.Content[at+1], o.Content[i+1], depth+1, join(path, k.Value))
			continue
		}
		out.Content = append(out.Content, o.Content[i], o.Content[i+1])
	}
	return out
}

// azureCredentials are the keys of azure storage that say how to sign in.
var azureCredentials = []string{"connection_string", "account_url", "credential"}

// azureCredentialSource drops the lower layer's way of signing in to Azure
// when the upper layer gives its own (a connection_string or an
// account_url), so that a user's connection string does not meet the
// master's account URL: as Determined merges azure storage, the
// credentials come whole from one layer.
func azureCredentialSource(b, o *yaml.Node, path string) *yaml.Node {
	if path != "checkpoint_storage" || scalarAt(o, "type") != StorageAzure && scalarAt(b, "type") != StorageAzure {
		return b
	}
	if scalarAt(o, "connection_string") == "" && scalarAt(o, "account_url") == "" {
		return b
	}
	kept := &yaml.Node{Kind: b.Kind, Tag: b.Tag, Line: b.Line, Column: b.Column}
	for i := 0; i+1 < len(b.Content); i += 2 {
		if !slices.Contains(azureCredentials, b.Content[i].Value) {
			kept.Content = append(kept.Content, b.Content[i], b.Content[i+1])
		}
	}
	return kept
}
