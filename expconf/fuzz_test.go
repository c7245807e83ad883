package expconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{"", "null", "- a", "a: &x [*x]", "hyperparameters: {a: {b: {c: 1}}}",
		"searcher: {name: grid, metric: m}\nhyperparameters: {a: {type: int, minval: 1, maxval: 2}}",
		"resources: {shm_size: 1e400}", "x: &a {<<: *a}"} {
		f.Add([]byte(s))
	}
}

// FuzzParseExperiment checks that no input panics and that every rejection
// is an Errors value; accepted configs must render and parse again.
func FuzzParseExperiment(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := expconf.ParseExperiment(data)
		if err != nil {
			var list expconf.Errors
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("rejection is not a non-empty Errors: %#v", err)
			}
			return
		}
		j, err := c.JSON()
		if err != nil {
			t.Fatalf("accepted config does not render: %v", err)
		}
		if _, err := expconf.ParseExperiment(j); err != nil {
			t.Fatalf("rendered config does not parse: %v\n%s", err, j)
		}
	})
}

// FuzzParseTask checks that no input panics and that every rejection is an
// Errors value.
func FuzzParseTask(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tt := range []string{expconf.TaskCommand, expconf.TaskNotebook, expconf.TaskTensorBoard} {
			if _, err := expconf.ParseTask(data, tt); err != nil {
				var list expconf.Errors
				if !errors.As(err, &list) || len(list) == 0 {
					t.Fatalf("rejection is not a non-empty Errors: %#v", err)
				}
			}
		}
	})
}
