package resolute

import (
	"encoding/json"
	"slices"
)

// Masked is what a secret of a config shows as wherever the config leaves
// the master, except to the task it is for: Determined's mask.
const Masked = "********"

// storageSecrets are checkpoint_storage's keys that hold secrets: S3's keys,
// and Azure's connection string (which holds the account key) and
// credential.
var storageSecrets = []string{"access_key", "secret_key", "connection_string", "credential"}

// IsStorageSecret says whether a checkpoint_storage key holds a secret.
func IsStorageSecret(key string) bool { return slices.Contains(storageSecrets, key) }

// MaskStorage returns a copy of a checkpoint_storage section with each
// secret that is set replaced by Masked. It is the one masking rule: the
// JSON and YAML forms of a config (MaskConfig, expconf.MaskYAML) apply it.
func MaskStorage(storage map[string]any) map[string]any {
	if storage == nil {
		return nil
	}
	out := make(map[string]any, len(storage))
	for k, v := range storage {
		if s, ok := v.(string); ok && s != "" && IsStorageSecret(k) {
			v = Masked
		}
		out[k] = v
	}
	return out
}

// MaskConfig returns an experiment or task config (a JSON object) with the
// secrets of its checkpoint_storage masked (MaskStorage); the config as it
// is when it has none. What it cannot read it returns as an empty object,
// never unmasked.
func MaskConfig(config json.RawMessage) json.RawMessage {
	if len(config) == 0 {
		return config
	}
	var m map[string]any
	if err := json.Unmarshal(config, &m); err != nil {
		return json.RawMessage("{}")
	}
	if cs, ok := m["checkpoint_storage"].(map[string]any); !ok || !hasSecret(cs) {
		return config
	}
	out, err := json.Marshal(MaskConfigMap(m))
	if err != nil {
		return json.RawMessage("{}")
	}
	return out
}

// MaskConfigMap is MaskConfig of a config as a map: a shallow copy with
// its checkpoint_storage masked.
func MaskConfigMap(config map[string]any) map[string]any {
	cs, ok := config["checkpoint_storage"].(map[string]any)
	if !ok {
		return config
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	out["checkpoint_storage"] = MaskStorage(cs)
	return out
}

func hasSecret(storage map[string]any) bool {
	for k, v := range storage {
		if s, ok := v.(string); ok && s != "" && s != Masked && IsStorageSecret(k) {
			return true
		}
	}
	return false
}

// MarshalJSON writes the experiment with its config's secrets masked: an
// experiment leaves the master only as JSON for people (the API, the
// pages' data); its trials get the real config in their environment.
func (e Experiment) MarshalJSON() ([]byte, error) {
	type plain Experiment
	e.Config = MaskConfig(e.Config)
	return json.Marshal(plain(e))
}

// MarshalJSON writes the task with its config's secrets masked (see
// Experiment.MarshalJSON).
func (t Task) MarshalJSON() ([]byte, error) {
	type plain Task
	t.Config = MaskConfig(t.Config)
	return json.Marshal(plain(t))
}
