package control_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
)

// TestUnderRBACALiveTopicIsToldOnlyToItsWorkspacesReaders: ann, a Viewer of
// workspace a, is told the topics of a's experiment, trial, trial's logs
// and system metrics, and notebook, and the collection and queue topics;
// none of b's, nor of an object that does not exist or a kind of topic
// not known. The administrator, and anyone under basic authorization, is
// told them all.
func TestUnderRBACALiveTopicIsToldOnlyToItsWorkspacesReaders(t *testing.T) {
	ctx := context.Background()
	w := newRBACWorld(t)
	if err := w.svc.Roles.Assign(ctx, w.admin, []control.Assignment{{Role: "Viewer", UserID: w.ann.ID, WorkspaceID: w.wsA.ID}}); err != nil {
		t.Fatal(err)
	}
	topicsOf := func(p resolute.Project) []string {
		e, err := w.db.CreateExperiment(ctx, db.NewExperiment{ProjectID: p.ID, UserID: w.ben.ID, Name: "e",
			State: resolute.StatePaused, Config: []byte(`{}`), SearcherState: []byte(`{}`), Weight: 1, ResourcePool: "default"})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := w.db.CreateTrial(ctx, e, 0, resolute.StatePaused, []byte(`{}`), 1)
		if err != nil {
			t.Fatal(err)
		}
		nb, err := w.db.CreateTask(ctx, db.NewTask{Type: resolute.TaskNotebook, Config: []byte("{}"), UserID: w.ben.ID, ProjectID: p.ID, ResourcePool: "default"})
		if err != nil {
			t.Fatal(err)
		}
		return []string{fmt.Sprintf("experiment:%d", e), fmt.Sprintf("experiment-logs:%d", e), fmt.Sprintf("trial:%d", tr.ID),
			fmt.Sprintf("system-metrics:%d", tr.ID), "task:" + tr.TaskID(), "logs:" + tr.TaskID(), "task:" + nb, "logs:" + nb}
	}
	ofA, ofB := topicsOf(w.projA), topicsOf(w.projB)
	common := []string{"experiments", "trials", "tasks", "master_logs", "queue:default"}
	unknown := []string{"experiment:999999", "task:notebook-999999", "trial:x", "secret:1"}
	all := slices.Concat(common, ofA, ofB, unknown)
	for _, tc := range []struct {
		who  string
		a    authz.Actor
		want []string
	}{
		{"a Viewer of a", w.actor(t, w.ann), slices.Concat(common, ofA)},
		{"a user with no role", w.actor(t, w.ben), common},
		{"the administrator", w.admin, all},
		{"anyone under basic authorization", authz.User(w.ben), all},
	} {
		got, err := w.svc.Roles.VisibleTopics(ctx, tc.a, all)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s is told\n%v\nwant\n%v", tc.who, got, tc.want)
		}
	}
}
