package handlers_test

import (
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestOnlyTheOwnerOrAnAdministratorDeletesACheckpoint: DELETE
// /api/v1/checkpoints refuses another user and a task's token, and queues
// nothing then; a checkpoint that does not exist is not_found; the owner's
// request queues one GC task for it.
func TestOnlyTheOwnerOrAnAdministratorDeletesACheckpoint(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := t.Context()
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"ann"},"password":"s3cret-pw"}`, nil)
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bo"},"password":"s3cret-pw"}`, nil)
	ann, bo := login(t, m, "ann", "s3cret-pw"), login(t, m, "bo", "s3cret-pw")
	u, err := m.DB.UserByUsername(ctx, "ann")
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Experiments.Create(ctx, authz.User(u.User), control.CreateRequest{Paused: true,
		ConfigYAML: "name: mine\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := m.DB.Trials(ctx, e.ID)
	const uuid = "cccccccc-0000-0000-0000-000000000001"
	if err := m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: trials[0].ID, ExperimentID: e.ID,
		StepsCompleted: 1, Resources: map[string]int64{"a": 1}, Size: 1}); err != nil {
		t.Fatal(err)
	}
	body := `{"checkpointUuids": ["` + uuid + `"]}`
	tests := map[string]struct {
		token, body string
		want        int
	}{
		"another user is forbidden":          {token: bo, body: body, want: 403},
		"nobody signed in is refused":        {token: "", body: body, want: 401},
		"an unknown checkpoint is not found": {token: ann, body: `{"checkpointUuids": ["cccccccc-0000-0000-0000-00000000dead"]}`, want: 404},
		"no checkpoint at all is invalid":    {token: ann, body: `{"checkpointUuids": []}`, want: 400},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if code := api(t, m, "DELETE", "/api/v1/checkpoints", tc.token, tc.body, nil); code != tc.want {
				t.Errorf("status %d, want %d", code, tc.want)
			}
		})
	}
	if gc, _ := m.DB.Tasks(ctx, db.TaskFilter{Type: resolute.TaskCheckpointGC}); len(gc) != 0 {
		t.Fatalf("a refused deletion queued %+v", gc)
	}
	if code := api(t, m, "DELETE", "/api/v1/checkpoints", ann, body, nil); code != 200 {
		t.Fatalf("the owner's deletion: %d", code)
	}
	gc, _ := m.DB.Tasks(ctx, db.TaskFilter{Type: resolute.TaskCheckpointGC})
	if len(gc) != 1 {
		t.Fatalf("GC tasks %+v", gc)
	}
	if held, _ := m.DB.TaskCheckpointGC(ctx, gc[0].ID); len(held) != 1 || held[0] != uuid {
		t.Fatalf("the GC task holds %v", held)
	}
}
