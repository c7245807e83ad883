package expconf_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

// TestParseExperimentAccepts checks the valid forms of each key and what
// they decode to.
func TestParseExperimentAccepts(t *testing.T) {
	tests := map[string]struct {
		yaml string
		got  func(*expconf.ExperimentConfig) any
		want any
	}{
		"an entrypoint list is exec form": {
			yaml: "entrypoint: [python3, train.py]",
			got:  func(c *expconf.ExperimentConfig) any { return c.Entrypoint },
			want: expconf.Entrypoint{Exec: []string{"python3", "train.py"}},
		},
		"bare scalars, lists and nested maps are hyperparameters": {
			yaml: "hyperparameters:\n  a: 1\n  b: [1, x]\n  c: {d: {type: categorical, vals: [1, 2]}}\n  e: {type: log, minval: -3, maxval: -1}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Hyperparameters },
			want: expconf.Hyperparameters{
				"a": {Type: expconf.HPConst, Val: 1},
				"b": {Type: expconf.HPConst, Val: []any{1, "x"}},
				"c": {Type: expconf.HPNested, Nested: expconf.Hyperparameters{"d": {Type: expconf.HPCategorical, Vals: []any{1, 2}}}},
				"e": {Type: expconf.HPLog, MinVal: -3, MaxVal: -1, Base: 10},
			},
		},
		"a gpu image is the cuda image": {
			yaml: "environment:\n  image: {cpu: c, gpu: g}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Environment.Image },
			want: expconf.DeviceImages{CPU: "c", CUDA: "g", ROCm: expconf.DefaultImage},
		},
		"an image string is used for every device": {
			yaml: "environment: {image: my/img:1}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Environment.Image },
			want: expconf.DeviceImages{CPU: "my/img:1", CUDA: "my/img:1", ROCm: "my/img:1"},
		},
		"a list of environment variables applies to every device": {
			yaml: "environment: {environment_variables: [A=1, B=x=y]}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Environment.EnvironmentVariables },
			want: expconf.DeviceEnv{CPU: []string{"A=1", "B=x=y"}, CUDA: []string{"A=1", "B=x=y"}, ROCm: []string{"A=1", "B=x=y"}},
		},
		"per-device environment variables stay apart": {
			yaml: "environment: {environment_variables: {cpu: [A=1], gpu: [B=2]}}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Environment.EnvironmentVariables },
			want: expconf.DeviceEnv{CPU: []string{"A=1"}, CUDA: []string{"B=2"}, ROCm: []string{}},
		},
		"shm_size takes a size string": {
			yaml: "resources: {shm_size: 512M}",
			got:  func(c *expconf.ExperimentConfig) any { return *c.Resources.ShmSize },
			want: int64(512 << 20),
		},
		"shm_size takes bytes": {
			yaml: "resources: {shm_size: 1024}",
			got:  func(c *expconf.ExperimentConfig) any { return *c.Resources.ShmSize },
			want: int64(1024),
		},
		"zero slots is a CPU trial and priority is kept": {
			yaml: "resources: {slots_per_trial: 0, priority: 1, weight: 2.5}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Resources },
			want: expconf.ResourcesConfig{SlotsPerTrial: 0, Priority: intp(1), Weight: 2.5},
		},
		"a device string is host:container:mode": {
			yaml: "resources: {devices: [/dev/fuse, '/dev/a:/dev/b:r']}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Resources.Devices },
			want: []expconf.Device{{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Mode: "mrw"}, {HostPath: "/dev/a", ContainerPath: "/dev/b", Mode: "r"}},
		},
		"bind mounts default to rprivate and writable": {
			yaml: "bind_mounts: [{host_path: /a, container_path: /b}]",
			got:  func(c *expconf.ExperimentConfig) any { return c.BindMounts },
			want: []expconf.BindMount{{HostPath: "/a", ContainerPath: "/b", Propagation: "rprivate"}},
		},
		"shared_fs gets its defaults": {
			yaml: "checkpoint_storage: {type: shared_fs, host_path: /mnt, storage_path: /mnt/ckpt}",
			got:  func(c *expconf.ExperimentConfig) any { return c.CheckpointStorage },
			want: &expconf.CheckpointStorageConfig{Type: "shared_fs", SaveTrialBest: 1, SaveTrialLatest: 1,
				SharedFS: &expconf.SharedFSStorage{HostPath: "/mnt", StoragePath: "/mnt/ckpt", ContainerPath: "/determined_shared_fs", Propagation: "rprivate"}},
		},
		"s3 keeps its credentials": {
			yaml: "checkpoint_storage: {type: s3, bucket: b, access_key: a, secret_key: s, endpoint_url: http://minio:9000, prefix: p/q}",
			got:  func(c *expconf.ExperimentConfig) any { return c.CheckpointStorage.S3 },
			want: &expconf.S3Storage{Bucket: "b", AccessKey: "a", SecretKey: "s", EndpointURL: "http://minio:9000", Prefix: "p/q"},
		},
		"azure with a connection string": {
			yaml: "checkpoint_storage: {type: azure, container: c, connection_string: x}",
			got:  func(c *expconf.ExperimentConfig) any { return c.CheckpointStorage.Azure },
			want: &expconf.AzureStorage{Container: "c", ConnectionString: "x"},
		},
		"a user policy replaces the default of the same name": {
			yaml: "log_policies:\n  - {name: CUDA OOM, pattern: OOM, action: exclude_node}\n  - {name: Mine}",
			got:  func(c *expconf.ExperimentConfig) any { return c.LogPolicies },
			want: []expconf.LogPolicy{
				{Name: "ECC Error", Pattern: ".*uncorrectable ECC error encountered.*", Action: "exclude_node"},
				{Name: "CUDA OOM", Pattern: "OOM", Action: "exclude_node"},
				{Name: "Mine"},
			},
		},
		"the seed can be set": {
			yaml: "reproducibility: {experiment_seed: 7}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Reproducibility.ExperimentSeed },
			want: int64(7),
		},
		"retention -1 keeps logs for ever": {
			yaml: "retention_policy: {log_retention_days: -1}",
			got:  func(c *expconf.ExperimentConfig) any { return c.RetentionPolicy },
			want: &expconf.RetentionPolicy{LogRetentionDays: -1},
		},
		"tensorboard_storage is ignored with a warning": {
			yaml: "tensorboard_storage: {type: s3, bucket: b}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Warnings },
			want: []string{"tensorboard_storage: deprecated and ignored; TensorBoard files are stored with checkpoints"},
		},
		"keys Resolute does not use warn that they are ignored": {
			yaml: "resources: {agent_label: gpu, native_parallel: true}\n" +
				"environment: {image: {rocm: rocm:1}, environment_variables: {rocm: [HIP=1]}}\n" +
				"checkpoint_storage: {type: shared_fs, host_path: /c, container_path: /mnt/c, checkpoint_path: /c/x, tensorboard_path: /c/tb}\n" +
				"integrations: {pachyderm: {dataset: {repo: r}}}\noptimizations: {aggregation_frequency: 2, auto_tune_tensor_fusion: true}",
			got: func(c *expconf.ExperimentConfig) any { return c.Warnings },
			want: []string{"resources.native_parallel: deprecated and ignored",
				"resources.agent_label: removed; use resource_pool instead (ignored)",
				"checkpoint_storage.container_path: ignored: Resolute mounts host_path at the same path in every task",
				"checkpoint_storage.checkpoint_path: ignored: checkpoints go under host_path (and storage_path)",
				"checkpoint_storage.tensorboard_path: deprecated; TensorBoard files are stored with checkpoints",
				"environment.image.rocm: kept with the config only: Resolute schedules no ROCm devices",
				"environment.environment_variables.rocm: kept with the config only: Resolute schedules no ROCm devices",
				"integrations.pachyderm: kept with the config only: Resolute has no Pachyderm integration",
				"optimizations: deprecated since Determined 0.38; kept for the legacy trial APIs",
				"optimizations.auto_tune_tensor_fusion: ignored: Resolute's PyTorch trainer reads only optimizations.aggregation_frequency"},
		},
		"YAML anchors and merge keys work": {
			yaml: "data:\n  x: &r {slots_per_trial: 2}\nresources:\n  <<: *r\n  weight: 3",
			got:  func(c *expconf.ExperimentConfig) any { return c.Resources.SlotsPerTrial },
			want: 2,
		},
		"webhooks and pachyderm are kept": {
			yaml: "integrations: {webhooks: {webhook_id: [1, 2], exclude: true}, pachyderm: {dataset: {repo: r}}}",
			got:  func(c *expconf.ExperimentConfig) any { return c.Integrations },
			want: &expconf.IntegrationsConfig{Webhooks: &expconf.WebhooksConfig{WebhookIDs: []int{1, 2}, Exclude: true},
				Pachyderm: map[string]any{"dataset": map[string]any{"repo": "r"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := parse(t, tc.yaml)
			if diff := cmp.Diff(tc.want, tc.got(c)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
