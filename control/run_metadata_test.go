package control_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// trialsOf adds a paused experiment owned by owner with n trials.
func trialsOf(t *testing.T, p people, owner authz.Actor, n int) []resolute.Trial {
	t.Helper()
	ctx := context.Background()
	projects, err := p.db.Projects(ctx, db.ProjectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.db.CreateExperiment(ctx, db.NewExperiment{ProjectID: projects[0].ID, UserID: owner.UserID(), Name: "e",
		State: resolute.StatePaused, Config: []byte(`{}`), SearcherState: []byte(`{}`), Weight: 1, ResourcePool: "default"})
	if err != nil {
		t.Fatal(err)
	}
	var out []resolute.Trial
	for i := range n {
		tr, err := p.db.CreateTrial(ctx, e, i, resolute.StatePaused, []byte(`{}`), 1)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// allocationOf is the actor of a running allocation of trial t.
func allocationOf(t resolute.Trial) authz.Actor {
	return authz.Allocation(resolute.Allocation{ID: t.TaskID() + ".1", TaskID: t.TaskID(), TrialID: &t.ID})
}

// metadataEqual compares JSON objects by value.
func metadataEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("stored metadata %q: %v", got, err)
	}
	json.Unmarshal([]byte(want), &w)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestRunMetadataIsSetByTheTrialsTaskItsOwnerOrAnAdmin(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	trials := trialsOf(t, p, p.alice, 2)
	own, other := trials[0], trials[1]
	tests := map[string]struct {
		actor authz.Actor
		trial int64
		md    string
		code  string
	}{
		"the trial's own task":           {allocationOf(own), own.ID, `{"by": "task"}`, ""},
		"the experiment's owner":         {p.alice, own.ID, `{"by": "alice"}`, ""},
		"an administrator":               {p.admin, own.ID, `{"by": "admin"}`, ""},
		"another user":                   {p.bob, own.ID, `{"by": "bob"}`, resolute.EForbidden},
		"another trial's task":           {allocationOf(other), own.ID, `{"by": "other"}`, resolute.EForbidden},
		"nobody":                         {authz.Actor{}, own.ID, `{"by": "nobody"}`, resolute.EUnauthorized},
		"a list instead of an object":    {p.alice, own.ID, `[1, 2]`, resolute.EInvalid},
		"null":                           {p.alice, own.ID, `null`, resolute.EInvalid},
		"nothing":                        {p.alice, own.ID, ``, resolute.EInvalid},
		"a trial that does not exist":    {p.admin, 999, `{"a": 1}`, resolute.ENotFound},
		"a task for a trial not its own": {allocationOf(own), other.ID, `{"by": "task"}`, resolute.EForbidden},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := p.svc.RunMetadata.Set(ctx, tc.actor, tc.trial, json.RawMessage(tc.md))
			if code(err) != tc.code {
				t.Fatalf("Set: %v, want code %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			metadataEqual(t, got, tc.md)
			stored, err := p.db.RunMetadata(ctx, tc.trial)
			if err != nil {
				t.Fatal(err)
			}
			metadataEqual(t, stored, tc.md)
		})
	}
}

func TestRunMetadataIsReplacedAsAWholeAndReadByAnyoneSignedInOrTheTrialsTask(t *testing.T) {
	ctx := context.Background()
	p := newPeople(t)
	trials := trialsOf(t, p, p.alice, 2)
	own, other := trials[0], trials[1]

	got, err := p.svc.RunMetadata.Get(ctx, p.bob, own.ID)
	if err != nil {
		t.Fatal(err)
	}
	metadataEqual(t, got, `{}`)

	task := allocationOf(own)
	if _, err := p.svc.RunMetadata.Set(ctx, task, own.ID, json.RawMessage(`{"a": {"b": [1, 2]}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.svc.RunMetadata.Set(ctx, task, own.ID, json.RawMessage(`{"c": "d"}`)); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]authz.Actor{"the task": task, "another user": p.bob} {
		got, err := p.svc.RunMetadata.Get(ctx, a, own.ID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		metadataEqual(t, got, `{"c": "d"}`)
	}
	for name, tc := range map[string]struct {
		actor authz.Actor
		code  string
	}{
		"another trial's task": {allocationOf(other), resolute.EForbidden},
		"nobody":               {authz.Actor{}, resolute.EUnauthorized},
	} {
		if _, err := p.svc.RunMetadata.Get(ctx, tc.actor, own.ID); code(err) != tc.code {
			t.Errorf("%s reads: %v, want %s", name, err, tc.code)
		}
	}
}
