package db_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/db"
)

// TestTrialCountsFollowTrials checks the trial count the list sorts by: kept
// by triggers as trials come and go, with the experiment deleted alongside.
func TestTrialCountsFollowTrials(t *testing.T) {
	ctx := context.Background()
	d := bootstrapped(t)
	admin, err := d.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	projects, err := d.Projects(ctx, db.ProjectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	newExperiment := func(name string) int64 {
		id, err := d.CreateExperiment(ctx, db.NewExperiment{ProjectID: projects[0].ID, UserID: admin.ID, Name: name, State: "PAUSED",
			Config:        []byte(`{"searcher": {"name": "random", "metric": "accuracy", "smaller_is_better": false}}`),
			SearcherState: []byte(`{}`), Weight: 1, ResourcePool: "default"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b := newExperiment("a"), newExperiment("b")
	for i := range 3 {
		if _, err := d.CreateTrial(ctx, a, i, "ACTIVE", []byte(`{}`), 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.CreateTrial(ctx, b, 0, "ACTIVE", []byte(`{}`), 1); err != nil {
		t.Fatal(err)
	}
	counts := func() map[string]int {
		page, total, err := d.ExperimentPage(ctx, db.ExperimentListFilter{Sort: "trials", Descending: true})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, e := range page {
			out[e.Name] = e.NumTrials
			if e.Searcher != "random" || e.Metric != "accuracy" || e.SmallerIsBetter {
				t.Errorf("%s: searcher %q %q smaller is better %v", e.Name, e.Searcher, e.Metric, e.SmallerIsBetter)
			}
		}
		if total != len(page) {
			t.Errorf("total %d, listed %d", total, len(page))
		}
		return out
	}
	if diff := cmp.Diff(map[string]int{"a": 3, "b": 1}, counts()); diff != "" {
		t.Errorf("trial counts (-want +got):\n%s", diff)
	}
	if e, _ := d.Experiment(ctx, a); e.NumTrials != 3 {
		t.Errorf("the experiment's page counts %d trials", e.NumTrials)
	}
	// Deleting an experiment deletes its trials, whose trigger finds it gone.
	if err := d.DeleteExperiment(ctx, a); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"b": 1}, counts()); diff != "" {
		t.Errorf("after a delete (-want +got):\n%s", diff)
	}
}
