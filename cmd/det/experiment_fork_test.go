package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestForkAndContinue(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := createdID(t, c.ok("", "experiment", "create", writeConfig(t, constConfig), contextDir(t)))
	c.ok("", "e", "wait", id, "--polling-interval", "0.2")
	parent, _ := strconv.ParseInt(id, 10, 64)
	ctx := context.Background()
	parentTrials, err := c.m.DB.Trials(ctx, parent)
	if err != nil || len(parentTrials) != 1 || parentTrials[0].LatestCheckpoint == "" {
		t.Fatalf("parent trials %+v, %v", parentTrials, err)
	}

	fork := createdID(t, c.ok("", "e", "fork", id, "--paused", "--config", "max_restarts=2"))
	forkID, _ := strconv.ParseInt(fork, 10, 64)
	e, err := c.m.DB.Experiment(ctx, forkID)
	if err != nil || e.ParentID == nil || *e.ParentID != parent || e.State != "PAUSED" {
		t.Fatalf("fork %+v, %v", e, err)
	}
	if trials, _ := c.m.DB.Trials(ctx, forkID); len(trials) != 1 || trials[0].LatestCheckpoint != "" {
		t.Fatalf("a fork starts fresh: %+v", trials)
	}

	cont := createdID(t, c.ok("", "e", "continue", id, "--paused"))
	contID, _ := strconv.ParseInt(cont, 10, 64)
	trials, _ := c.m.DB.Trials(ctx, contID)
	if len(trials) != 1 || trials[0].LatestCheckpoint != parentTrials[0].LatestCheckpoint {
		t.Fatalf("continue starts from the parent's checkpoint %s: %+v", parentTrials[0].LatestCheckpoint, trials)
	}
}
