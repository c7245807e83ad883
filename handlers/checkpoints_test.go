package handlers_test

import (
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAnotherUserCannotMarkSomeonesCheckpointDeleted closes the hole where
// PATCH /api/v1/checkpoints let any signed-in user mark another user's
// checkpoint deleted.
func TestAnotherUserCannotMarkSomeonesCheckpointDeleted(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := t.Context()
	hash, _ := auth.HashPassword("s3cret-pw")
	var alice resolute.User
	for _, name := range []string{"alice", "bob"} {
		u, err := m.DB.CreateUser(ctx, name, "", hash, false)
		if err != nil {
			t.Fatal(err)
		}
		if name == "alice" {
			alice = u
		}
	}
	e, err := m.Experiments.Create(ctx, authz.User(alice), control.CreateRequest{Paused: true,
		ConfigYAML: "name: kept\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	if err != nil {
		t.Fatal(err)
	}
	trials, err := m.DB.Trials(ctx, e.ID)
	if err != nil || len(trials) != 1 {
		t.Fatalf("trials %v %v", trials, err)
	}
	const uuid = "cccccccc-0000-0000-0000-000000000000"
	err = m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: trials[0].ID, ExperimentID: e.ID,
		StepsCompleted: 10, Resources: map[string]int64{"model.pt": 8}, Size: 8})
	if err != nil {
		t.Fatal(err)
	}
	deleteIt := `{"checkpoints": [{"uuid": "` + uuid + `", "resources": {"resources": {}}}]}`
	if code := api(t, m, "PATCH", "/api/v1/checkpoints", login(t, m, "bob", "s3cret-pw"), deleteIt, nil); code != 403 {
		t.Fatalf("bob marks alice's checkpoint deleted: status %d, want 403", code)
	}
	if c, _ := m.DB.Checkpoint(ctx, uuid); c.State != "COMPLETED" {
		t.Fatalf("after bob's refused request the checkpoint is %s", c.State)
	}
	if code := api(t, m, "PATCH", "/api/v1/checkpoints", login(t, m, "alice", "s3cret-pw"), deleteIt, nil); code != 200 {
		t.Fatalf("alice marks her checkpoint deleted: status %d", code)
	}
	if c, _ := m.DB.Checkpoint(ctx, uuid); c.State != "DELETED" {
		t.Fatalf("after alice's request the checkpoint is %s", c.State)
	}
}
