package control_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

// logAt stores one line of task at t.
func (h *harness) logAt(task string, t time.Time, text string) {
	h.t.Helper()
	if err := h.db.InsertTaskLogs(h.ctx, []resolute.TaskLog{{TaskID: task, AllocationID: task + ".1", Time: t, Log: text}}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) remaining(task string) []string {
	h.t.Helper()
	logs, err := h.db.TaskLogs(h.ctx, task, dbLogFilter())
	if err != nil {
		h.t.Fatal(err)
	}
	return lines(logs)
}

// TestRetentionDeletesOnlyTheOldLogsOfExperimentsNotKeptLonger: the cleanup
// deletes lines older than the master's log_retention_days, except for
// experiments whose retention_policy keeps them longer.
func TestRetentionDeletesOnlyTheOldLogsOfExperimentsNotKeptLonger(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for name, tt := range map[string]struct {
		defaultDays int
		want        map[string][]string // experiment → lines left
	}{
		"with a default of 5 days": {5, map[string][]string{
			"default": {"new"}, "forever": {"old", "new"}, "config 30 days": {"old", "new"}, "set to 1 day": {"new"}, "command": {"new"}}},
		"with the default of keeping logs for ever": {-1, map[string][]string{
			"default": {"old", "new"}, "forever": {"old", "new"}, "config 30 days": {"old", "new"}, "set to 1 day": {"new"}, "command": {"old", "new"}}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 0)
			svc := control.NewServices(h.db, h.run, nil, quietLogger(), control.WithLogRetention(tt.defaultDays),
				control.WithRetentionClock(func() time.Time { return now }))
			tasks := map[string]string{}
			for _, exp := range []string{"default", "forever", "config 30 days", "set to 1 day"} {
				yaml := strings.Replace(single, "name: one", "name: "+exp, 1)
				if exp == "config 30 days" {
					yaml += "retention_policy: {log_retention_days: 30}\n"
				}
				e := h.create(yaml)
				switch exp {
				case "forever":
					if err := svc.LogRetention.SetExperiment(h.ctx, h.admin, e.ID, -1); err != nil {
						t.Fatal(err)
					}
				case "set to 1 day":
					if err := svc.LogRetention.SetExperiment(h.ctx, h.admin, e.ID, 1); err != nil {
						t.Fatal(err)
					}
				}
				trials, _ := h.db.Trials(h.ctx, e.ID)
				tasks[exp] = trials[0].TaskID()
			}
			tasks["command"] = "command-99"
			for _, task := range tasks {
				h.logAt(task, now.Add(-10*24*time.Hour), "old")
				h.logAt(task, now.Add(-time.Hour), "new")
			}
			if _, err := svc.LogRetention.Cleanup(h.ctx, h.admin); err != nil {
				t.Fatal(err)
			}
			for exp, want := range tt.want {
				if got := h.remaining(tasks[exp]); !slices.Equal(got, want) {
					t.Errorf("%s: %v left, want %v", exp, got, want)
				}
			}
		})
	}
}

func TestOnlyAdministratorsCleanUpLogsAndOwnersSetTheirRetention(t *testing.T) {
	h := newHarness(t, 0)
	svc := control.NewServices(h.db, h.run, nil, quietLogger())
	bob, err := svc.Users.Create(h.ctx, h.admin, resolute.UserSpec{Username: "bob"}, "s3cret-pw-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LogRetention.Cleanup(h.ctx, authz.User(bob)); resolute.ErrorCode(err) != resolute.EForbidden {
		t.Errorf("bob cleaned up logs: %v", err)
	}
	e := h.create(single) // the administrator's
	if err := svc.LogRetention.SetExperiment(h.ctx, authz.User(bob), e.ID, -1); resolute.ErrorCode(err) != resolute.EForbidden {
		t.Errorf("bob set another's retention: %v", err)
	}
	if err := svc.LogRetention.SetExperiment(h.ctx, h.admin, e.ID, -2); resolute.ErrorMessage(err) !=
		"log retention: expected a number of days from 0 to 32767, or -1 to keep the logs for ever; got -2" {
		t.Errorf("-2 days: %v", err)
	}
}

// soon is a schedule whose next run is right away.
type soon struct{}

func (soon) Next(t time.Time) time.Time { return t.Add(time.Millisecond) }

func TestTheScheduledCleanupRuns(t *testing.T) {
	h := newHarness(t, 0)
	svc := control.NewServices(h.db, h.run, nil, quietLogger(), control.WithLogRetention(1))
	h.logAt("command-1", time.Now().Add(-48*time.Hour), "old")
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	go svc.LogRetention.Run(ctx, soon{})
	waitFor(t, func() bool { return len(h.remaining("command-1")) == 0 }, "the scheduled cleanup deleted the old line")
}
