package control

import (
	"context"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// Configs expands experiment configs: master defaults < template < user
// config < --config overrides (seeds: "Configuration Templates").
type Configs struct {
	db       *db.DB
	defaults []byte // the master's layer: checkpoint_storage, task_container_defaults
	now      func() time.Time
}

// NewConfigs returns the config expander; defaults is the master's layer
// (masterconf.Config.Defaults).
func NewConfigs(database *db.DB, defaults []byte) *Configs {
	return &Configs{db: database, defaults: defaults, now: time.Now}
}

// ExpandExperiment merges the layers and returns the fully expanded config,
// or every error at once (code invalid). templateName "" means none.
func (c *Configs) ExpandExperiment(ctx context.Context, userYAML []byte, templateName string, overrides []string) (*expconf.ExperimentConfig, error) {
	layers := [][]byte{c.defaults}
	if templateName != "" {
		t, err := c.db.Template(ctx, templateName)
		if err != nil {
			return nil, err
		}
		layers = append(layers, []byte(t.ConfigYAML))
	}
	layers = append(layers, userYAML)
	cfg, err := expconf.ParseExperimentLayers(layers, overrides, expconf.WithClock(c.now))
	if err != nil {
		return nil, invalid(err)
	}
	return cfg, nil
}

// PreviewSearch expands a config and returns the searcher's plan.
func (c *Configs) PreviewSearch(ctx context.Context, userYAML []byte, templateName string, overrides []string) (*expconf.ExperimentConfig, searcher.Plan, error) {
	cfg, err := c.ExpandExperiment(ctx, userYAML, templateName, overrides)
	if err != nil {
		return nil, searcher.Plan{}, err
	}
	plan, err := searcher.Preview(cfg.Searcher, cfg.Hyperparameters)
	if err != nil {
		return nil, searcher.Plan{}, invalid(err)
	}
	return cfg, plan, nil
}

// CheckTemplate validates a template's YAML: a map of config keys that may
// be partial, naming no other template.
func CheckTemplate(configYAML string) error {
	if strings.TrimSpace(configYAML) == "" {
		return resolute.Errorf(resolute.EInvalid, "config: a template must not be empty")
	}
	if _, err := expconf.ParseTemplate([]byte(configYAML)); err != nil {
		return invalid(err)
	}
	return nil
}

// invalid marks a config error as bad input. expconf's errors already carry
// the invalid code (every field error, one per line); others, such as YAML
// syntax errors, get it here.
func invalid(err error) error {
	if resolute.ErrorCode(err) != resolute.EInternal {
		return err
	}
	return resolute.Errorf(resolute.EInvalid, "%s", err.Error())
}
