package masterconf

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

// MarshalYAML writes a duration as master.yaml takes it: "168h0m0s".
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Redacted is the configuration as `det master config` shows it (GET
// /api/v1/master/config): every key as master.yaml names it, with each
// secret that is set (the database password, the initial password,
// checkpoint storage keys, any key naming a password, secret or token)
// replaced by resolute.Masked.
func (c Config) Redacted() (map[string]any, error) {
	data, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("master config: %w", err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("master config: %w", err)
	}
	redact(out)
	return out, nil
}

// redact masks the secrets of v in place, at any depth.
func redact(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && s != "" && secretKey(k) {
				v[k] = resolute.Masked
				continue
			}
			redact(x)
		}
	case []any:
		for _, x := range v {
			redact(x)
		}
	}
}

// secretKey says whether a key of the configuration holds a secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	return resolute.IsStorageSecret(k) || strings.Contains(k, "password") || strings.Contains(k, "secret") ||
		strings.Contains(k, "token")
}
