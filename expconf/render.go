package expconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Map renders the fully expanded config as plain YAML-shaped values with
// Determined's snake_case keys. Parsing it again gives an equal config.
func (c *ExperimentConfig) Map() map[string]any {
	m := map[string]any{
		"labels":                     c.Labels,
		"hyperparameters":            c.Hyperparameters.render(),
		"resources":                  c.Resources.render(false, 0),
		"max_restarts":               c.MaxRestarts,
		"checkpoint_policy":          c.CheckpointPolicy,
		"environment":                c.Environment.render(),
		"bind_mounts":                renderBindMounts(c.BindMounts),
		"debug":                      c.Debug,
		"perform_initial_validation": c.PerformInitialValidation,
		"profiling":                  c.Profiling.render(),
		"reproducibility":            map[string]any{"experiment_seed": c.Reproducibility.ExperimentSeed},
		"log_policies":               renderLogPolicies(c.LogPolicies),
	}
	putStr(m, "name", c.Name)
	putStr(m, "description", c.Description)
	putStr(m, "project", c.Project)
	putStr(m, "workspace", c.Workspace)
	if ep := c.Entrypoint.render(); ep != nil {
		m["entrypoint"] = ep
	}
	if s := c.Searcher.render(); s != nil {
		m["searcher"] = s
	}
	if cs := c.CheckpointStorage.render(); cs != nil {
		m["checkpoint_storage"] = cs
	}
	if c.Data != nil {
		m["data"] = c.Data
	}
	if c.PreemptionTimeout != nil {
		m["preemption_timeout"] = *c.PreemptionTimeout
	}
	if c.RetentionPolicy != nil {
		m["retention_policy"] = map[string]any{"log_retention_days": c.RetentionPolicy.LogRetentionDays}
	}
	if ic := c.Integrations.render(); ic != nil {
		m["integrations"] = ic
	}
	if c.MinValidationPeriod != nil {
		m["min_validation_period"] = c.MinValidationPeriod.render()
	}
	if c.MinCheckpointPeriod != nil {
		m["min_checkpoint_period"] = c.MinCheckpointPeriod.render()
	}
	if c.RecordsPerEpoch != nil {
		m["records_per_epoch"] = *c.RecordsPerEpoch
	}
	if c.SchedulingUnit != nil {
		m["scheduling_unit"] = *c.SchedulingUnit
	}
	if c.Optimizations != nil {
		m["optimizations"] = c.Optimizations
	}
	return m
}

// YAML renders the fully expanded config as YAML, keys sorted.
func (c *ExperimentConfig) YAML() ([]byte, error) {
	return renderYAML(c.Map())
}

func renderYAML(m map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("render config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("render config: %w", err)
	}
	return buf.Bytes(), nil
}

// JSON renders the fully expanded config as JSON with snake_case keys, as
// trials receive it in DET_EXPERIMENT_CONFIG.
func (c *ExperimentConfig) JSON() ([]byte, error) {
	b, err := json.Marshal(c.Map())
	if err != nil {
		return nil, fmt.Errorf("render experiment config: %w", err)
	}
	return b, nil
}

func (p ProfilingConfig) render() map[string]any {
	m := map[string]any{"enabled": p.Enabled, "begin_on_batch": p.BeginOnBatch, "sync_timings": p.SyncTimings}
	if p.EndAfterBatch != nil {
		m["end_after_batch"] = *p.EndAfterBatch
	}
	return m
}

func putStr(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

func formatInt(i int64) string { return strconv.FormatInt(i, 10) }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
