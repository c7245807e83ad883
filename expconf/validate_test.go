package expconf_test

import (
	"errors"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

// TestParseExperimentRejects asserts the exact message of every rejection,
// so users get the path, what was expected and the line.
func TestParseExperimentRejects(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want string
	}{
		"an escape sequence in the name, written with YAML's escapes": {
			yaml: "name: \"\\e[2J\\e[31mPWNED\"",
			want: "name: must not contain control characters (line 1)",
		},
		"a carriage return in the name": {
			yaml: "name: \"ok\\rFAILED\"",
			want: "name: must not contain control characters (line 1)",
		},
		"a right-to-left override in the name": {
			yaml: "name: \"model\\u202Etxt.exe\"",
			want: "name: must not contain control characters (line 1)",
		},
		"ESC in the description, where newlines and tabs are fine": {
			yaml: "description: \"two\\nlines\\tand \\x1b[1mbold\"",
			want: "description: must not contain control characters other than newlines and tabs (line 1)",
		},
		"a label with a control character is named by its index": {
			yaml: "labels:\n  - fine\n  - \"bell\\a\"",
			want: "labels[1]: must not contain control characters (line 3)",
		},
		"adaptive_asha without max_trials names the searcher": {
			yaml: "searcher:\n  name: adaptive_asha\n  metric: loss\n  max_time: 10\n  time_metric: batches",
			want: "searcher.max_trials: required when searcher.name is adaptive_asha (line 2)",
		},
		"adaptive_asha without max_time or time_metric is incomplete": {
			yaml: "searcher: {name: adaptive_asha, metric: loss, max_trials: 4}",
			want: "searcher.max_time: required when searcher.name is adaptive_asha (line 1)\nsearcher.time_metric: required when searcher.name is adaptive_asha (line 1)",
		},
		"random without max_trials is incomplete": {
			yaml: "searcher: {name: random, metric: loss}",
			want: "searcher.max_trials: required when searcher.name is random (line 1)",
		},
		"async_halving needs num_rungs": {
			yaml: "searcher: {name: async_halving, metric: loss, max_trials: 2, max_time: 5, time_metric: batches}",
			want: "searcher.num_rungs: required when searcher.name is async_halving (line 1)",
		},
		"a searcher needs a name": {
			yaml: "searcher: {metric: loss}",
			want: "searcher.name: required (one of single, random, grid, adaptive_asha or async_halving) (line 1)",
		},
		"an unknown searcher lists the known ones": {
			yaml: "searcher: {name: bayes, metric: loss}",
			want: `searcher.name: must be one of single, random, grid, adaptive_asha or async_halving, got "bayes" (line 1)`,
		},
		"the custom searcher was removed": {
			yaml: "searcher: {name: custom, metric: loss, unit: batches}",
			want: "searcher.name: the custom searcher was removed in Determined 0.38 and is not supported; use one of single, random, grid, adaptive_asha or async_halving (line 1)",
		},
		"sync_halving was removed": {
			yaml: "searcher: {name: sync_halving, metric: loss}",
			want: "searcher.name: the sync_halving searcher was removed in Determined 0.38 and is not supported; use one of single, random, grid, adaptive_asha or async_halving (line 1)",
		},
		"another searcher's key is named as such": {
			yaml: "searcher: {name: random, metric: loss, max_trials: 2, divisor: 3}",
			want: "searcher.divisor: not used by the random searcher (line 1)",
		},
		"a misspelt searcher key gets a suggestion": {
			yaml: "searcher: {name: random, metric: loss, max_trial: 2}",
			want: "searcher.max_trials: required when searcher.name is random (line 1)\nsearcher.max_trial: unknown key (did you mean max_trials?) (line 1)",
		},
		"an unknown mode is rejected": {
			yaml: "searcher: {name: adaptive_asha, metric: l, max_trials: 2, max_time: 5, time_metric: b, mode: wild}",
			want: `searcher.mode: must be one of standard, aggressive or conservative, got "wild" (line 1)`,
		},
		"bad numeric searcher settings are all reported": {
			yaml: "searcher: {name: adaptive_asha, metric: l, max_trials: 0, max_time: 0, time_metric: b, divisor: 1, max_rungs: 0, max_concurrent_trials: -1, bracket_rungs: [0]}",
			want: "searcher.max_trials: must be at least 1, got 0 (line 1)\n" +
				"searcher.max_concurrent_trials: must be 0 (no limit) or more, got -1 (line 1)\n" +
				"searcher.max_time: must be at least 1, got 0 (line 1)\n" +
				"searcher.divisor: must be greater than 1, got 1 (line 1)\n" +
				"searcher.max_rungs: must be at least 1, got 0 (line 1)\n" +
				"searcher.bracket_rungs[0]: must be at least 1, got 0 (line 1)",
		},
		"max_length needs exactly one unit": {
			yaml: "searcher: {name: single, metric: l, max_length: {batches: 1, epochs: 2}}",
			want: "searcher.max_length: give exactly one of batches, records or epochs (line 1)",
		},
		"grid requires count on every numeric hyperparameter": {
			yaml: "hyperparameters:\n  lr: {type: log, minval: -3, maxval: -1}\n  n: {type: int, minval: 1, maxval: 4, count: 2}\n  m:\n    d: {type: double, minval: 0, maxval: 1}\nsearcher:\n  name: grid\n  metric: l",
			want: "hyperparameters.lr.count: required by the grid searcher for log hyperparameters (line 2)\nhyperparameters.m.d.count: required by the grid searcher for double hyperparameters (line 5)",
		},
		"minval must be below maxval": {
			yaml: "hyperparameters:\n  lr:\n    type: double\n    minval: 0.1\n    maxval: 0.01",
			want: "hyperparameters.lr.minval: must be less than maxval (got 0.1 >= 0.01) (line 4)",
		},
		"int bounds must be integers": {
			yaml: "hyperparameters:\n  n: {type: int, minval: 1.5, maxval: 4}",
			want: "hyperparameters.n.minval: expected an integer, got 1.5 (line 2)",
		},
		"count must be positive": {
			yaml: "hyperparameters:\n  n: {type: int, minval: 1, maxval: 4, count: 0}",
			want: "hyperparameters.n.count: must be at least 1, got 0 (line 2)",
		},
		"categorical needs values": {
			yaml: "hyperparameters:\n  o: {type: categorical, vals: []}\n  p: {type: categorical}",
			want: "hyperparameters.o.vals: must not be empty (line 2)\nhyperparameters.p.vals: required for a categorical hyperparameter (line 3)",
		},
		"a range hyperparameter needs both bounds": {
			yaml: "hyperparameters:\n  n: {type: int, maxval: 4}",
			want: "hyperparameters.n.minval: required for an int hyperparameter (line 2)",
		},
		"const needs val": {
			yaml: "hyperparameters:\n  c: {type: const}",
			want: "hyperparameters.c.val: required for a const hyperparameter (line 2)",
		},
		"an unknown hyperparameter type is named": {
			yaml: "hyperparameters:\n  c: {type: float, minval: 1}",
			want: `hyperparameters.c.type: must be one of const, int, double, log or categorical, got "float" (line 2)`,
		},
		"a hyperparameter key typo is suggested": {
			yaml: "hyperparameters:\n  c: {type: double, minval: 1, maxval: 2, max: 3}",
			want: "hyperparameters.c.max: unknown key (did you mean maxval?) (line 2)",
		},
		"log base must be positive": {
			yaml: "hyperparameters:\n  c: {type: log, minval: 1, maxval: 2, base: 0}",
			want: "hyperparameters.c.base: must be greater than 0, got 0 (line 2)",
		},
		"a misspelt resources key gets a suggestion": {
			yaml: "resources:\n  slot_per_trial: 2",
			want: "resources.slot_per_trial: unknown key (did you mean slots_per_trial?) (line 2)",
		},
		"a type error names the path and the expected type": {
			yaml: "resources:\n  slots_per_trial: two",
			want: `resources.slots_per_trial: expected an integer, got "two" (line 2)`,
		},
		"resources bounds are checked": {
			yaml: "resources: {slots_per_trial: -1, priority: 100, weight: 0, max_slots: -2, shm_size: lots}",
			want: "resources.slots_per_trial: must be 0 or more, got -1 (line 1)\n" +
				"resources.max_slots: must be 0 or more, got -2 (line 1)\n" +
				"resources.weight: must be greater than 0, got 0 (line 1)\n" +
				"resources.priority: must be between 1 and 99, got 100 (line 1)\n" +
				`resources.shm_size: expected a number of bytes or a size like "4G", got "lots" (line 1)`,
		},
		"devices need paths": {
			yaml: "resources:\n  devices:\n    - {container_path: /dev/x}",
			want: "resources.devices[0].host_path: required (line 3)",
		},
		"max_restarts must not be negative": {
			yaml: "max_restarts: -1",
			want: "max_restarts: must be 0 or more, got -1 (line 1)",
		},
		"checkpoint_policy is an enum": {
			yaml: "checkpoint_policy: some",
			want: `checkpoint_policy: must be one of best, all or none, got "some" (line 1)`,
		},
		"shared_fs needs host_path": {
			yaml: "checkpoint_storage:\n  type: shared_fs",
			want: "checkpoint_storage.host_path: required when checkpoint_storage.type is shared_fs (line 2)",
		},
		"shared_fs storage_path must be inside host_path": {
			yaml: "checkpoint_storage: {type: shared_fs, host_path: /mnt/a, storage_path: /mnt/b}",
			want: `checkpoint_storage.storage_path: must be relative or inside host_path "/mnt/a", got "/mnt/b" (line 1)`,
		},
		"shared_fs relative storage_path must not climb out": {
			yaml: "checkpoint_storage: {type: shared_fs, host_path: /mnt/a, storage_path: ../b}",
			want: `checkpoint_storage.storage_path: must stay inside host_path, got "../b" (line 1)`,
		},
		"directory needs container_path": {
			yaml: "checkpoint_storage: {type: directory}",
			want: "checkpoint_storage.container_path: required when checkpoint_storage.type is directory (line 1)",
		},
		"s3 needs a bucket": {
			yaml: "checkpoint_storage: {type: s3, prefix: a}",
			want: "checkpoint_storage.bucket: required when checkpoint_storage.type is s3 (line 1)",
		},
		"gcs needs a bucket": {
			yaml: "checkpoint_storage: {type: gcs}",
			want: "checkpoint_storage.bucket: required when checkpoint_storage.type is gcs (line 1)",
		},
		"azure needs one way to authenticate": {
			yaml: "checkpoint_storage: {type: azure, container: c}",
			want: "checkpoint_storage: give exactly one of connection_string or account_url (line 1)",
		},
		"azure rejects both ways to authenticate": {
			yaml: "checkpoint_storage: {type: azure, container: c, connection_string: x, account_url: y}",
			want: "checkpoint_storage: give exactly one of connection_string or account_url, not both (line 1)",
		},
		"azure needs a container": {
			yaml: "checkpoint_storage: {type: azure, connection_string: x}",
			want: "checkpoint_storage.container: required when checkpoint_storage.type is azure (line 1)",
		},
		"storage needs a type": {
			yaml: "checkpoint_storage: {bucket: b}",
			want: "checkpoint_storage.type: required (one of shared_fs, directory, s3, gcs or azure) (line 1)",
		},
		"an s3 key on gcs is unknown": {
			yaml: "checkpoint_storage: {type: gcs, bucket: b, access_key: k}",
			want: "checkpoint_storage.access_key: unknown key (line 1)",
		},
		"gc counts must not be negative": {
			yaml: "checkpoint_storage: {type: gcs, bucket: b, save_trial_best: -1}",
			want: "checkpoint_storage.save_trial_best: must be 0 or more, got -1 (line 1)",
		},
		"environment variables must be NAME=VALUE": {
			yaml: "environment:\n  environment_variables:\n    - GOOD=1\n    - BAD",
			want: `environment.environment_variables[1]: expected NAME=VALUE, got "BAD" (line 4)`,
		},
		"per-device environment variables are checked too": {
			yaml: "environment:\n  environment_variables:\n    gpu: [=x]",
			want: `environment.environment_variables.gpu[0]: expected NAME=VALUE, got "=x" (line 3)`,
		},
		"an unknown image device is rejected": {
			yaml: "environment:\n  image: {tpu: x}",
			want: "environment.image.tpu: unknown key (did you mean cpu?) (line 2)",
		},
		"ports are not supported and proxy ports need a port": {
			yaml: "environment:\n  ports: {web: 7000}\n  proxy_ports: [{proxy_tcp: true}]",
			want: "environment.ports: not supported: nothing reads it; expose a task's ports with proxy_ports (line 2)\nenvironment.proxy_ports[0].proxy_port: required (line 3)",
		},
		"bind mounts need absolute host paths": {
			yaml: "bind_mounts:\n  - host_path: data\n    container_path: /data\n    propagation: weird",
			want: "bind_mounts[0].host_path: must be an absolute path, got \"data\" (line 2)\n" +
				`bind_mounts[0].propagation: must be one of rprivate, private, rshared, shared, rslave or slave, got "weird" (line 4)`,
		},
		"registry tokens are not supported": {
			yaml: "environment:\n  registry_auth: {identitytoken: a, registrytoken: b}",
			want: "environment.registry_auth.identitytoken: not supported: the pull secret is made from username and password (or auth) (line 2)\n" +
				"environment.registry_auth.registrytoken: not supported: the pull secret is made from username and password (or auth) (line 2)",
		},
		"mounts that are not private are not supported": {
			yaml: "bind_mounts:\n  - {host_path: /a, container_path: /a, propagation: rshared}\ncheckpoint_storage: {type: shared_fs, host_path: /c, propagation: rslave}",
			want: "bind_mounts[0].propagation: rshared is not supported: Resolute mounts host directories private (rprivate; Kubernetes' None), so mounts made later on the host are not seen (line 2)\n" +
				"checkpoint_storage.propagation: rslave is not supported: Resolute mounts host directories private (rprivate; Kubernetes' None), so mounts made later on the host are not seen (line 3)",
		},
		"log policies need a name in the new form": {
			yaml: "log_policies:\n  - pattern: x\n    action: cancel_retries",
			want: "log_policies[0].name: required (line 2)",
		},
		"log policy actions are an enum in both forms": {
			yaml: "log_policies:\n  - {name: a, action: retry}\n  - {pattern: x, action: {type: stop}}",
			want: `log_policies[0].action: must be one of cancel_retries or exclude_node, got "retry" (line 2)` + "\n" +
				`log_policies[1].action.type: must be one of cancel_retries or exclude_node, got "stop" (line 3)`,
		},
		"log policy patterns must compile": {
			yaml: "log_policies:\n  - {name: a, pattern: '(', action: exclude_node}",
			want: "log_policies[0].pattern: not a valid regular expression: error parsing regexp: missing closing ): `(` (line 2)",
		},
		"log retention days are bounded": {
			yaml: "retention_policy: {log_retention_days: 40000}",
			want: "retention_policy.log_retention_days: must be between -1 and 32767, got 40000 (line 1)",
		},
		"entrypoint must not be empty": {
			yaml: "entrypoint: []",
			want: "entrypoint: must not be empty (line 1)",
		},
		"entrypoint must be a string or list": {
			yaml: "entrypoint: {cmd: x}",
			want: "entrypoint: expected a string, got a map (line 1)",
		},
		"labels must be strings": {
			yaml: "labels: [a, [b]]",
			want: "labels[1]: expected a string, got a list (line 1)",
		},
		"profiling end must follow begin": {
			yaml: "profiling: {enabled: yes, begin_on_batch: 5, end_after_batch: 2}",
			want: "profiling.enabled: expected true or false, got \"yes\" (line 1)\nprofiling.end_after_batch: must not be less than begin_on_batch (got 2 < 5) (line 1)",
		},
		"the seed must fit 32 bits": {
			yaml: "reproducibility: {experiment_seed: -1}",
			want: "reproducibility.experiment_seed: must be between 0 and 4294967295, got -1 (line 1)",
		},
		"preemption_timeout must not be negative": {
			yaml: "preemption_timeout: -5",
			want: "preemption_timeout: must be 0 or more seconds, got -5 (line 1)",
		},
		"enterprise keys are not supported": {
			yaml: "slurm: {slots_per_node: 4}\npbs: {}\nsecurity: {kerberos: {config_file: /etc/krb5.conf}}",
			want: "slurm: not supported by Resolute (a Determined Enterprise Edition HPC launcher key) (line 1)\n" +
				"pbs: not supported by Resolute (a Determined Enterprise Edition HPC launcher key) (line 2)\n" +
				"security: not supported by Resolute (security.kerberos is a Determined Enterprise Edition key) (line 3)",
		},
		"a template key is refused": {
			yaml: "template: base",
			want: "template: not supported in a config: templates are chosen when submitting (det --template) (line 1)",
		},
		"internal must be null": {
			yaml: "internal: {x: 1}",
			want: "internal: not supported: reserved by Determined; must be null (line 1)",
		},
		"a top-level typo is suggested": {
			yaml: "checkpoint_storge: {type: gcs, bucket: b}\nhyperparameter: {}",
			want: "checkpoint_storge: unknown key (did you mean checkpoint_storage?) (line 1)\nhyperparameter: unknown key (did you mean hyperparameters?) (line 2)",
		},
		"duplicate keys are reported": {
			yaml: "name: a\nname: b",
			want: "name: duplicate key (line 2)",
		},
		"the document must be a map": {
			yaml: "- a",
			want: "expected a map, got a list (line 1)",
		},
		"webhook ids are integers": {
			yaml: "integrations: {webhooks: {webhook_id: [x]}}",
			want: `integrations.webhooks.webhook_id[0]: expected an integer, got "x" (line 1)`,
		},
		"deprecated keys still validate": {
			yaml: "min_validation_period: {steps: 3}\nrecords_per_epoch: -1",
			want: "min_validation_period: give exactly one of batches, records or epochs (line 1)\nmin_validation_period.steps: unknown key (line 1)\nrecords_per_epoch: must be 0 or more, got -1 (line 2)",
		},
		"a recursive alias is refused": {
			yaml: "data: &x {a: *x}",
			want: "document too large, too deeply nested or too heavily aliased",
		},
		"invalid YAML is reported": {
			yaml: "name: [",
			want: "invalid YAML: yaml: line 1: did not find expected node content",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := expconf.ParseExperiment([]byte(tc.yaml), fixedSeed)
			if err == nil {
				t.Fatalf("ParseExperiment succeeded, want %q", tc.want)
			}
			var list expconf.Errors
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want expconf.Errors", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
