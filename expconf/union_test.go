package expconf_test

import (
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

const base = "name: x\nentrypoint: python3 train.py\n"

func TestUnionSectionsOfAnotherKindReplaceTheLowerLayer(t *testing.T) {
	tests := map[string]struct {
		lower, upper string
		check        func(t *testing.T, c *expconf.ExperimentConfig)
	}{
		"an s3 storage drops the master's shared_fs keys": {
			lower: "checkpoint_storage: {type: shared_fs, host_path: /mnt, save_trial_best: 3}\n",
			upper: "checkpoint_storage: {type: s3, bucket: b}\nsearcher: {name: single, metric: loss}\n",
			check: func(t *testing.T, c *expconf.ExperimentConfig) {
				if c.CheckpointStorage.S3 == nil || c.CheckpointStorage.SharedFS != nil || c.CheckpointStorage.SaveTrialBest != 1 {
					t.Fatalf("storage = %+v", c.CheckpointStorage)
				}
			},
		},
		"a storage of the same type merges key by key": {
			lower: "checkpoint_storage: {type: shared_fs, host_path: /mnt, save_trial_best: 3}\n",
			upper: "checkpoint_storage: {type: shared_fs, storage_path: ckpts}\nsearcher: {name: single, metric: loss}\n",
			check: func(t *testing.T, c *expconf.ExperimentConfig) {
				if c.CheckpointStorage.SharedFS.HostPath != "/mnt" || c.CheckpointStorage.SaveTrialBest != 3 {
					t.Fatalf("storage = %+v", c.CheckpointStorage)
				}
			},
		},
		"another searcher drops the template's searcher keys": {
			lower: "checkpoint_storage: {type: shared_fs, host_path: /mnt}\nsearcher: {name: random, metric: loss, max_trials: 5}\n",
			upper: "searcher: {name: single, metric: acc, smaller_is_better: false}\n",
			check: func(t *testing.T, c *expconf.ExperimentConfig) {
				if c.Searcher.Name != "single" || c.Searcher.MaxTrials != 0 {
					t.Fatalf("searcher = %+v", c.Searcher)
				}
			},
		},
		"a hyperparameter of another type replaces the template's": {
			lower: "checkpoint_storage: {type: shared_fs, host_path: /mnt}\nsearcher: {name: single, metric: loss}\nhyperparameters: {lr: {type: double, minval: 0.1, maxval: 1}}\n",
			upper: "hyperparameters: {lr: {type: categorical, vals: [0.1, 0.2]}}\n",
			check: func(t *testing.T, c *expconf.ExperimentConfig) {
				if hp := c.Hyperparameters["lr"]; hp.Type != expconf.HPCategorical || len(hp.Vals) != 2 {
					t.Fatalf("lr = %+v", hp)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := expconf.ParseExperimentLayers([][]byte{[]byte(base + tc.lower), []byte(tc.upper)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestABareMaxLengthIsAUnitlessLength(t *testing.T) {
	c, err := expconf.ParseExperimentLayers([][]byte{[]byte(base +
		"checkpoint_storage: {type: shared_fs, host_path: /mnt}\nsearcher: {name: adaptive_asha, metric: loss, max_trials: 4, max_length: 10}\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Searcher.MaxLength; l == nil || l.Unit != "" || l.Units != 10 || c.Searcher.TimeMetric != "batches" || c.Searcher.MaxTime != 10 {
		t.Fatalf("searcher = %+v", c.Searcher)
	}
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := expconf.ParseExperiment(out)
	if err != nil || again.Searcher.MaxLength.Units != 10 {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	if _, err := expconf.ParseExperiment([]byte("searcher: {name: single, metric: l, max_length: -1}\n")); err == nil {
		t.Fatal("a negative length is accepted")
	}
}
