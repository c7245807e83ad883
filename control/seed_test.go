package control_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

const randomSearch = `
name: search
entrypoint: python3 train.py
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
  layers: {type: int, minval: 1, maxval: 1000}
searcher: {name: random, metric: loss, max_trials: 3}
`

// searchOf is what makes a search reproducible: its seed (as the expanded
// config shows it) and the hyperparameters its trials got.
type searchOf struct {
	ConfigSeed int64
	Hparams    []string
}

func (h *harness) search(e resolute.Experiment) searchOf {
	h.t.Helper()
	var cfg struct {
		Reproducibility struct {
			ExperimentSeed int64 `json:"experiment_seed"`
		} `json:"reproducibility"`
	}
	if err := json.Unmarshal(e.Config, &cfg); err != nil {
		h.t.Fatal(err)
	}
	if cfg.Reproducibility.ExperimentSeed != e.Seed {
		h.t.Errorf("experiment %d ran with seed %d but its config says %d", e.ID, e.Seed, cfg.Reproducibility.ExperimentSeed)
	}
	trials, err := h.db.Trials(h.ctx, e.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	s := searchOf{ConfigSeed: cfg.Reproducibility.ExperimentSeed}
	for _, t := range trials {
		s.Hparams = append(s.Hparams, string(t.Hparams))
	}
	if len(s.Hparams) != 3 {
		h.t.Fatalf("experiment %d has %d trials, want 3", e.ID, len(s.Hparams))
	}
	return s
}

func TestSearchesWithoutASeedGetDifferentRandomSeedsAndTheSeedReproducesOne(t *testing.T) {
	h := newHarness(t, 0)
	first := h.search(h.create(randomSearch))
	second := h.search(h.create(randomSearch))
	if first.ConfigSeed == second.ConfigSeed {
		t.Errorf("two searches submitted at once share the seed %d", first.ConfigSeed)
	}
	if cmp.Equal(first.Hparams, second.Hparams) {
		t.Errorf("two searches without a seed drew the same hyperparameters: %v", first.Hparams)
	}

	// Submitting again with the seed the first one got reproduces it.
	again := h.search(h.create(randomSearch + "reproducibility: {experiment_seed: " + strconv.FormatInt(first.ConfigSeed, 10) + "}\n"))
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the same config and seed gave another search (-first +again):\n%s", diff)
	}
}
