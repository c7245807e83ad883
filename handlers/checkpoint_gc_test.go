package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestACheckpointGCTaskDeletesWhatThePolicyDoesNotKeep: on the local
// resource manager too, the checkpoints the policy does not keep (the
// defaults keep a trial's best and latest: here both are its last) are
// deleted by a CHECKPOINT_GC task, and marked deleted once it succeeds.
func TestACheckpointGCTaskDeletesWhatThePolicyDoesNotKeep(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	exp := createSlow(t, m, token, slowConfig("gc", 42, 0, 4))
	if e := waitFor(t, m, token, exp, 60*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s", e.State)
	}
	ctx := context.Background()
	var gc []resolute.Task
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		gc, _ = m.DB.Tasks(ctx, db.TaskFilter{Type: resolute.TaskCheckpointGC})
		if len(gc) == 1 && gc[0].State == resolute.TaskTerminated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint GC tasks %+v", gc)
		}
	}
	if gc[0].ExitCode == nil || *gc[0].ExitCode != 0 {
		t.Fatalf("checkpoint GC task %+v", gc[0])
	}
	doomed, err := m.DB.TaskCheckpointGC(ctx, gc[0].ID)
	if err != nil || len(doomed) != 3 {
		t.Fatalf("the GC task deleted %v, %v; want the 3 checkpoints before the last", doomed, err)
	}
	for _, uuid := range doomed {
		c, err := m.DB.Checkpoint(ctx, uuid)
		if _, statErr := os.Stat(filepath.Join(m.CheckpointDir, uuid)); err != nil || c.State != "DELETED" || !os.IsNotExist(statErr) {
			t.Errorf("checkpoint %s: %s, %v; its files: %v", uuid, c.State, err, statErr)
		}
	}
	kept, _ := m.DB.ExperimentCheckpoints(ctx, exp)
	if len(kept) != 1 || kept[0].StepsCompleted != 4 {
		t.Fatalf("kept %+v", kept)
	}
	if _, err := os.Stat(filepath.Join(m.CheckpointDir, kept[0].UUID)); err != nil {
		t.Errorf("the kept checkpoint's files: %v", err)
	}
}
