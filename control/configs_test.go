package control_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/expconf"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

const userConfig = `
name: mnist
entrypoint: python3 train.py
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
searcher: {name: random, metric: loss, max_trials: 4}
`

func TestExpansionOrderIsDefaultsTemplateUserOverrides(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	if err := d.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	defaults, err := expconf.MasterDefaults(map[string]any{"type": "shared_fs", "host_path": "/master"},
		map[string]any{"image": "master:1", "environment_variables": []any{"FROM=master"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTemplate(ctx, "team", "checkpoint_storage: {type: shared_fs, host_path: /team}\nenvironment: {image: team:1}\nmax_restarts: 2\n", 1, 1); err != nil {
		t.Fatal(err)
	}
	c := control.NewConfigs(d, defaults)
	cfg, err := c.ExpandExperiment(ctx, authz.System, []byte(userConfig+"environment: {image: user:1}\n"), "team", []string{"max_restarts=7"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CheckpointStorage.SharedFS.HostPath; got != "/team" {
		t.Errorf("template loses to the master defaults: host_path %q", got)
	}
	if got := cfg.Environment.Image.CPU; got != "user:1" {
		t.Errorf("user config loses to the template: image %q", got)
	}
	if cfg.MaxRestarts != 7 {
		t.Errorf("override loses: max_restarts %d", cfg.MaxRestarts)
	}
	if got := cfg.Environment.EnvironmentVariables.CPU; len(got) != 1 || got[0] != "FROM=master" {
		t.Errorf("master defaults missing: %v", got)
	}

	_, plan, err := c.PreviewSearch(ctx, authz.System, []byte(userConfig), "team", nil)
	if err != nil || plan.Trials != 4 {
		t.Fatalf("preview: %+v %v", plan, err)
	}
}

func TestBadConfigsAndTemplatesAreInvalid(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	d.Bootstrap(ctx, "")
	c := control.NewConfigs(d, nil)
	tests := map[string]struct {
		config, template string
		code, message    string
	}{
		"a config without checkpoint storage anywhere": {userConfig, "", resolute.EInvalid, "checkpoint_storage"},
		"a misspelled key":    {userConfig + "max_restart: 1\n", "", resolute.EInvalid, "max_restart: unknown key (did you mean max_restarts?)"},
		"broken YAML":         {"name: [", "", resolute.EInvalid, "yaml"},
		"an unknown template": {userConfig, "nope", resolute.ENotFound, `template "nope" not found`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := c.ExpandExperiment(ctx, authz.System, []byte(tc.config), tc.template, nil)
			if resolute.ErrorCode(err) != tc.code || !strings.Contains(resolute.ErrorMessage(err), tc.message) {
				t.Fatalf("got %s %q, want %s containing %q", resolute.ErrorCode(err), resolute.ErrorMessage(err), tc.code, tc.message)
			}
		})
	}
	for yaml, want := range map[string]string{
		"":                  "must not be empty",
		"- a list":          "",
		"template: other\n": "template",
	} {
		err := control.CheckTemplate(yaml)
		if err == nil || resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), want) {
			t.Errorf("CheckTemplate(%q) = %v", yaml, err)
		}
	}
}

func TestAPoolsOwnDefaultsReplaceTheMasters(t *testing.T) {
	ctx := context.Background()
	d := dbtest.New(t)
	d.Bootstrap(ctx, "")
	storage := map[string]any{"type": "shared_fs", "host_path": "/ckpt"}
	master, _ := expconf.MasterDefaults(storage, map[string]any{"image": "master:1"})
	gpu, _ := expconf.MasterDefaults(storage, map[string]any{"image": "gpu:1"})
	c := control.NewConfigs(d, master, control.WithPoolDefaults(map[string][]byte{"gpu": gpu}, "default"))
	tests := map[string]struct {
		extra     string
		overrides []string
		image     string
	}{
		"the default pool gets the master's defaults": {"", nil, "master:1"},
		"the gpu pool gets its own":                   {"resources: {resource_pool: gpu}\n", nil, "gpu:1"},
		"an override picks the pool too":              {"", []string{"resources.resource_pool=gpu"}, "gpu:1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := c.ExpandExperiment(ctx, authz.System, []byte(userConfig+tc.extra), "", tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Environment.Image.CPU; got != tc.image {
				t.Fatalf("image %q, want %q", got, tc.image)
			}
		})
	}
}
