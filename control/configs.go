package control

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/searcher"
)

// Configs expands experiment configs: master (or pool) defaults < template <
// user config < --config overrides (seeds: "Configuration Templates").
type Configs struct {
	db          *db.DB
	defaults    []byte            // the master's layer: checkpoint_storage, task_container_defaults
	pools       map[string][]byte // pools with their own task_container_defaults
	computePool string            // where experiments go without resources.resource_pool
}

// NewConfigs returns the config expander; defaults is the master's layer
// (masterconf.Config.Defaults).
func NewConfigs(database *db.DB, defaults []byte, opts ...ConfigsOption) *Configs {
	c := &Configs{db: database, defaults: defaults}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ConfigsOption tunes NewConfigs.
type ConfigsOption func(*Configs)

// WithPoolDefaults gives the pools that have their own
// task_container_defaults (masterconf.Config.PoolDefaults) and the default
// compute pool; a config landing in such a pool gets that layer instead of
// the master's.
func WithPoolDefaults(pools map[string][]byte, computePool string) ConfigsOption {
	return func(c *Configs) { c.pools, c.computePool = pools, computePool }
}

// mergedUpper merges a config's upper layers and overrides as maps, to
// read the keys that pick its lower layers (workspace, project,
// resources.resource_pool); nil when they do not merge.
func mergedUpper(upper [][]byte, overrides []string) map[string]any {
	var maps []map[string]any
	for _, l := range upper {
		var m map[string]any
		if yaml.Unmarshal(l, &m) == nil {
			maps = append(maps, m)
		}
	}
	merged, err := expconf.ApplyOverrides(expconf.Merge(maps...), overrides)
	if err != nil {
		return nil
	}
	return merged
}

// defaultsFor picks the lowest layer for a config whose upper layers merge
// to merged: the pool's own defaults when it has them, else the master's.
// computePool is where the config goes when it names no pool.
func (c *Configs) defaultsFor(merged map[string]any, computePool string) []byte {
	if len(c.pools) == 0 {
		return c.defaults
	}
	pool := computePool
	if pool == "" {
		pool = c.computePool
	}
	if res, ok := merged["resources"].(map[string]any); ok {
		if p, ok := res["resource_pool"].(string); ok && p != "" {
			pool = p
		}
	}
	if layer, ok := c.pools[pool]; ok {
		return layer
	}
	return c.defaults
}

// workspaceSettings are the settings of the workspace a config is
// submitted in: project projectID's, else the one its workspace key names,
// else the default workspace's. A workspace that is not found has none
// here; the submission reports it when it places the experiment.
func (c *Configs) workspaceSettings(ctx context.Context, projectID int64, merged map[string]any) (resolute.WorkspaceSettings, error) {
	var wsID int64
	if projectID != 0 {
		p, err := c.db.Project(ctx, projectID)
		if err != nil {
			return resolute.WorkspaceSettings{}, ignoreNotFound(err)
		}
		wsID = p.WorkspaceID
	} else {
		name, _ := merged["workspace"].(string)
		if name == "" {
			name = resolute.DefaultWorkspaceName
		}
		w, err := c.db.WorkspaceByName(ctx, name)
		if err != nil {
			return resolute.WorkspaceSettings{}, ignoreNotFound(err)
		}
		wsID = w.ID
	}
	return c.db.WorkspaceSettings(ctx, wsID)
}

// ignoreNotFound is nil for a not_found error, else err.
func ignoreNotFound(err error) error {
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return nil
	}
	return err
}

// ExpandExperiment merges the layers and returns the fully expanded config,
// or every error at once (code invalid). templateName "" means none; a
// template a may not read (under RBAC, of a workspace where they hold no
// role that reads templates) is not found. The config's workspace key (or
// the default workspace) gives its workspace.
func (c *Configs) ExpandExperiment(ctx context.Context, a authz.Actor, userYAML []byte, templateName string, overrides []string) (*expconf.ExperimentConfig, error) {
	return c.ExpandExperimentIn(ctx, a, 0, userYAML, templateName, overrides)
}

// ExpandExperimentIn is ExpandExperiment for a config submitted in project
// projectID (0: the project its keys name): master (or pool) defaults <
// the workspace's checkpoint storage < template < user config < overrides.
func (c *Configs) ExpandExperimentIn(ctx context.Context, a authz.Actor, projectID int64, userYAML []byte, templateName string,
	overrides []string) (*expconf.ExperimentConfig, error) {
	var upper [][]byte
	if templateName != "" {
		t, err := readTemplate(ctx, c.db, a, templateName)
		if err != nil {
			return nil, err
		}
		upper = append(upper, []byte(t.ConfigYAML))
	}
	upper = append(upper, userYAML)
	merged := mergedUpper(upper, overrides)
	ws, err := c.workspaceSettings(ctx, projectID, merged)
	if err != nil {
		return nil, err
	}
	// A config without a name gets one, as Determined's does.
	name := []byte(fmt.Sprintf("name: %q\n", expconf.GenerateName(rand.Uint64())))
	layers := [][]byte{name, c.defaultsFor(merged, ws.DefaultComputePool)}
	if l := StorageLayer(ws); l != nil {
		layers = append(layers, l)
	}
	layers = append(layers, upper...)
	cfg, err := expconf.ParseExperimentLayers(layers, overrides)
	if err != nil {
		return nil, invalid(err)
	}
	return cfg, nil
}

// PreviewSearch expands a config and returns the searcher's plan.
func (c *Configs) PreviewSearch(ctx context.Context, a authz.Actor, userYAML []byte, templateName string, overrides []string) (*expconf.ExperimentConfig, searcher.Plan, error) {
	cfg, err := c.ExpandExperiment(ctx, a, userYAML, templateName, overrides)
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
