package expconf_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestMerge(t *testing.T) {
	tests := map[string]struct {
		layers []map[string]any
		want   map[string]any
	}{
		"later maps merge key by key": {
			layers: []map[string]any{
				{"resources": map[string]any{"slots_per_trial": 1, "resource_pool": "a"}},
				{"resources": map[string]any{"slots_per_trial": 4}},
			},
			want: map[string]any{"resources": map[string]any{"slots_per_trial": 4, "resource_pool": "a"}},
		},
		"a later list replaces": {
			layers: []map[string]any{{"labels": []any{"a", "b"}}, {"labels": []any{"c"}}},
			want:   map[string]any{"labels": []any{"c"}},
		},
		"a later null keeps the earlier value": {
			layers: []map[string]any{{"name": "x"}, {"name": nil}},
			want:   map[string]any{"name": "x"},
		},
		"a scalar can replace a map": {
			layers: []map[string]any{{"environment": map[string]any{"image": map[string]any{"cpu": "a"}}}, {"environment": map[string]any{"image": "b"}}},
			want:   map[string]any{"environment": map[string]any{"image": "b"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, expconf.Merge(tc.layers...)); diff != "" {
				t.Errorf("Merge mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeLeavesInputsAlone(t *testing.T) {
	base := map[string]any{"resources": map[string]any{"weight": 1}}
	expconf.Merge(base, map[string]any{"resources": map[string]any{"weight": 2}})
	if diff := cmp.Diff(map[string]any{"resources": map[string]any{"weight": 1}}, base); diff != "" {
		t.Errorf("Merge changed its input (-want +got):\n%s", diff)
	}
}

func TestApplyOverrides(t *testing.T) {
	got, err := expconf.ApplyOverrides(
		map[string]any{"resources": map[string]any{"slots_per_trial": 1, "resource_pool": "a"}},
		[]string{"resources.slots_per_trial=8", "searcher.max_trials=4", "name=my exp", "labels=[x, y]", "debug=true"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"resources": map[string]any{"slots_per_trial": 8, "resource_pool": "a"},
		"searcher":  map[string]any{"max_trials": 4},
		"name":      "my exp",
		"labels":    []any{"x", "y"},
		"debug":     true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ApplyOverrides mismatch (-want +got):\n%s", diff)
	}
	if _, err := expconf.ApplyOverrides(nil, []string{"no-equals", "a..b=1"}); err == nil ||
		err.Error() != "--config: expected key.path=value, got \"no-equals\"\na..b: empty segment in override key" {
		t.Errorf("bad overrides error = %v", err)
	}
}

const (
	poolDefaults = `
environment:
  image: cluster/default:1
  environment_variables: [FROM_POOL=1]
resources:
  resource_pool: gpu
checkpoint_storage:
  type: shared_fs
  host_path: /mnt/shared
`
	template = `
description: from template
resources:
  slots_per_trial: 2
  priority: 20
checkpoint_storage:
  save_trial_best: 3
`
	userConfig = `
name: mine
entrypoint: python3 train.py
searcher:
  name: random
  metric: loss
  max_trials: 10
resources:
  slots_per_trial: 4
`
)

func TestParseExperimentLayersPrecedence(t *testing.T) {
	c, err := expconf.ParseExperimentLayers([][]byte{[]byte(poolDefaults), []byte(template), []byte(userConfig)},
		[]string{"searcher.max_trials=3"}, fixedSeed)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Desc, Pool, Image string
		Slots, MaxTrials  int
		Priority          *int
		Storage           *expconf.CheckpointStorageConfig
		Env               []string
	}
	got := view{c.Description, c.Resources.ResourcePool, c.Environment.Image.CUDA, c.Resources.SlotsPerTrial,
		c.Searcher.MaxTrials, c.Resources.Priority, c.CheckpointStorage, c.Environment.EnvironmentVariables.CPU}
	want := view{
		Desc: "from template", Pool: "gpu", Image: "cluster/default:1", Slots: 4, MaxTrials: 3, Priority: intp(20),
		Storage: &expconf.CheckpointStorageConfig{Type: "shared_fs", SaveTrialBest: 3, SaveTrialLatest: 1,
			SharedFS: &expconf.SharedFSStorage{HostPath: "/mnt/shared", ContainerPath: "/determined_shared_fs", Propagation: "rprivate"}},
		Env: []string{"FROM_POOL=1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged config mismatch (-want +got):\n%s", diff)
	}
}

func TestParseExperimentLayersErrors(t *testing.T) {
	tests := map[string]struct {
		layers    []string
		overrides []string
		want      string
	}{
		"an error keeps the line of the layer it came from": {
			layers: []string{poolDefaults, "name: x\nentrypoint: a\nsearcher: {name: single, metric: m}\nresources:\n  priority: 0"},
			want:   "resources.priority: must be between 1 and 99, got 0 (line 5)",
		},
		"a bad override is reported without a line": {
			layers:    []string{poolDefaults, userConfig},
			overrides: []string{"resources.slots_per_trial=two"},
			want:      `resources.slots_per_trial: expected an integer, got "two"`,
		},
		"missing eventually-required keys are reported after merging": {
			layers: []string{"description: d", "searcher: {name: single}"},
			want:   "name: required\nentrypoint: required\nsearcher.metric: required\ncheckpoint_storage: required (set it in the config or in the master's default)",
		},
		"invalid YAML names its layer": {
			layers: []string{"a: [", "b: 1"},
			want:   "layer 1: invalid YAML: yaml: line 1: did not find expected node content",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var layers [][]byte
			for _, l := range tc.layers {
				layers = append(layers, []byte(l))
			}
			_, err := expconf.ParseExperimentLayers(layers, tc.overrides, fixedSeed)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error =\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestParseTemplate(t *testing.T) {
	m, err := expconf.ParseTemplate([]byte(template))
	if err != nil {
		t.Fatal(err)
	}
	if m["description"] != "from template" {
		t.Errorf("template map = %v", m)
	}
	_, err = expconf.ParseTemplate([]byte("template: other"))
	want := "template: not supported in a config: templates are chosen when submitting (det --template) (line 1)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
