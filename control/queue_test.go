package control_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

func order(t *testing.T, h *harness) []string {
	t.Helper()
	jobs, err := h.run.Queue.Jobs(h.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobID)
	}
	return out
}

func TestReorderingTheQueue(t *testing.T) {
	h := newHarness(t, 0) // no slots: everything waits
	a, b, c := h.create(single), h.create(single), h.create(single)
	ja, jb, jc := control.JobID(a.ID), control.JobID(b.ID), control.JobID(c.ID)
	if got := order(t, h); len(got) != 3 || got[0] != ja || got[2] != jc {
		t.Fatalf("submission order: %v", got)
	}
	if err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{{JobID: jc, AheadOf: ja}}); err != nil {
		t.Fatal(err)
	}
	if got := order(t, h); got[0] != jc || got[1] != ja || got[2] != jb {
		t.Fatalf("after moving c ahead of a: %v", got)
	}
	if err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{{JobID: jc, BehindOf: jb}}); err != nil {
		t.Fatal(err)
	}
	if got := order(t, h); got[0] != ja || got[2] != jc {
		t.Fatalf("after moving c behind b: %v", got)
	}
	// A move never changes a priority: next to a job of another priority
	// (in a pool that runs by priority) it is refused, saying why.
	p := 10
	if err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{{JobID: ja, Priority: &p}}); err != nil {
		t.Fatal(err)
	}
	err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{{JobID: jc, AheadOf: ja}})
	if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), "change "+jc+"'s priority instead") {
		t.Fatalf("moving next to a job of another priority: %v", err)
	}
	if c := h.experiment(c.ID); c.Priority != nil {
		t.Fatalf("c's priority became %d", *c.Priority)
	}
}

func TestBadQueueUpdatesAreRefused(t *testing.T) {
	h := newHarness(t, 0)
	a := h.create(single)
	done := h.create(single)
	if err := h.x.SetState(h.ctx, authz.System, done.ID, "cancel"); err != nil {
		t.Fatal(err)
	}
	zero, big, neg := 0.0, 100, -1.0
	pool := "nowhere"
	tests := map[string]resolute.QueueControl{
		"a priority above 99":       {JobID: control.JobID(a.ID), Priority: &big},
		"a weight of zero":          {JobID: control.JobID(a.ID), Weight: &zero},
		"a negative weight":         {JobID: control.JobID(a.ID), Weight: &neg},
		"an unknown pool":           {JobID: control.JobID(a.ID), ResourcePool: &pool},
		"a move next to a done job": {JobID: control.JobID(a.ID), AheadOf: control.JobID(done.ID)},
		"a move next to itself":     {JobID: control.JobID(a.ID), AheadOf: control.JobID(a.ID)},
		"a job id of no kind":       {JobID: "experiment-x", AheadOf: control.JobID(a.ID)},
	}
	for name, u := range tests {
		t.Run(name, func(t *testing.T) {
			if err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{u}); resolute.ErrorCode(err) != resolute.EInvalid {
				t.Fatalf("got %v, want invalid", err)
			}
		})
	}
}

func TestConcurrentReordersKeepEveryJobOnce(t *testing.T) {
	h := newHarness(t, 0)
	var ids []string
	for i := 0; i < 6; i++ {
		ids = append(ids, control.JobID(h.create(single).ID))
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := resolute.QueueControl{JobID: ids[i%6], AheadOf: ids[(i+3)%6]}
			if i%2 == 1 {
				u = resolute.QueueControl{JobID: ids[i%6], BehindOf: ids[(i+2)%6]}
			}
			if err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{u}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	got := order(t, h)
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	if len(got) != 6 || len(seen) != 6 {
		t.Fatalf("queue after concurrent moves: %v", got)
	}
	jobs, _ := h.run.Queue.Jobs(h.ctx, "")
	for i := 1; i < len(jobs); i++ {
		if jobs[i].QueuePosition == jobs[i-1].QueuePosition {
			t.Fatalf("two jobs share position %v", jobs[i].QueuePosition)
		}
	}
}

func TestAnUnknownJobIsNotFound(t *testing.T) {
	h := newHarness(t, 0)
	a := h.create(single)
	err := h.run.Queue.Update(h.ctx, authz.System, []resolute.QueueControl{{JobID: "notebook-3", AheadOf: control.JobID(a.ID)}})
	if resolute.ErrorCode(err) != resolute.ENotFound || !strings.Contains(resolute.ErrorMessage(err), `no job "notebook-3"`) {
		t.Fatalf("got %v, want not found naming the job", err)
	}
}

// queueTask queues a zero-slot task of kind for the actor; with no slots
// in the harness it waits in the default pool beside the experiments.
func (h *harness) queueTask(a authz.Actor, kind string) resolute.Task {
	h.t.Helper()
	req := control.TaskRequest{Type: kind, ConfigYAML: "resources: {slots: 0}\n"}
	if kind == resolute.TaskCommand {
		req.Entrypoint = []string{"sleep", "100"}
	}
	task, err := h.run.Tasks.Create(h.ctx, a, req)
	if err != nil {
		h.t.Fatal(err)
	}
	return task
}

// TestJobsOfEveryTypeMoveAmongEachOther: notebooks, shells and commands are
// jobs of the same queue as experiments; moving one next to another works
// in both directions and leaves every priority as it was.
func TestJobsOfEveryTypeMoveAmongEachOther(t *testing.T) {
	h := newHarness(t, 0)
	root, err := h.db.UserByUsername(h.ctx, resolute.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	admin := authz.User(root.User)
	exp := h.create(single)
	e := control.JobID(exp.ID)
	nb := h.queueTask(admin, resolute.TaskNotebook).ID
	sh := h.queueTask(admin, resolute.TaskShell).ID
	cmd := h.queueTask(admin, resolute.TaskCommand).ID
	if got := order(t, h); strings.Join(got, " ") != strings.Join([]string{e, nb, sh, cmd}, " ") {
		t.Fatalf("submission order: %v", got)
	}
	moves := []struct {
		u    resolute.QueueControl
		want []string
	}{
		{resolute.QueueControl{JobID: sh, AheadOf: e}, []string{sh, e, nb, cmd}},
		{resolute.QueueControl{JobID: e, BehindOf: cmd}, []string{sh, nb, cmd, e}},
		{resolute.QueueControl{JobID: cmd, AheadOf: sh}, []string{cmd, sh, nb, e}},
		{resolute.QueueControl{JobID: nb, BehindOf: e}, []string{cmd, sh, e, nb}},
	}
	for _, m := range moves {
		if err := h.run.Queue.Update(h.ctx, admin, []resolute.QueueControl{m.u}); err != nil {
			t.Fatalf("%+v: %v", m.u, err)
		}
		if got := order(t, h); strings.Join(got, " ") != strings.Join(m.want, " ") {
			t.Fatalf("after %+v: %v, want %v", m.u, got, m.want)
		}
	}
	jobs, _ := h.run.Queue.Jobs(h.ctx, "")
	for _, j := range jobs {
		if j.Priority != 42 {
			t.Errorf("%s has priority %d after the moves, want the pool's default 42", j.JobID, j.Priority)
		}
	}
	if ex := h.experiment(exp.ID); ex.Priority != nil {
		t.Errorf("the moved experiment's priority was set to %d", *ex.Priority)
	}
	// A task's weight and pool do not change.
	w := 2.0
	if err := h.run.Queue.Update(h.ctx, admin, []resolute.QueueControl{{JobID: nb, Weight: &w}}); resolute.ErrorCode(err) != resolute.EInvalid {
		t.Errorf("a notebook's weight: %v", err)
	}
}

// TestOnlyAJobsOwnerOrAnAdministratorChangesIt closes the hole where the
// queue checked ownership only for jobs it listed: another user changed a
// paused experiment's priority and weight.
func TestOnlyAJobsOwnerOrAnAdministratorChangesIt(t *testing.T) {
	h := newHarness(t, 0)
	user := func(name string) authz.Actor {
		u, err := h.db.CreateUser(h.ctx, name, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		return authz.User(u)
	}
	alice, bob := user("alice"), user("bob")
	e, err := h.x.Create(h.ctx, alice, control.CreateRequest{ConfigYAML: single})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.x.SetState(h.ctx, alice, e.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	nb := h.queueTask(alice, resolute.TaskNotebook).ID
	other := control.JobID(h.create(single).ID) // the administrator's
	p, w := 5, 9.0
	refused := map[string]resolute.QueueControl{
		"a paused experiment's priority": {JobID: control.JobID(e.ID), Priority: &p},
		"a paused experiment's weight":   {JobID: control.JobID(e.ID), Weight: &w},
		"a notebook's priority":          {JobID: nb, Priority: &p},
		"a notebook's place":             {JobID: nb, BehindOf: other},
	}
	for name, u := range refused {
		if err := h.run.Queue.Update(h.ctx, bob, []resolute.QueueControl{u}); resolute.ErrorCode(err) != resolute.EForbidden {
			t.Errorf("bob changes %s: %v, want forbidden", name, err)
		}
	}
	if got := h.experiment(e.ID); got.Priority != nil || got.Weight != 1 {
		t.Fatalf("refused changes changed the experiment: priority %v weight %v", got.Priority, got.Weight)
	}
	if err := h.run.Queue.Update(h.ctx, alice, []resolute.QueueControl{{JobID: control.JobID(e.ID), Priority: &p}}); err != nil {
		t.Errorf("alice changes her paused experiment: %v", err)
	}
	if err := h.run.Queue.Update(h.ctx, alice, []resolute.QueueControl{{JobID: nb, BehindOf: other}}); err != nil {
		t.Errorf("alice moves her notebook: %v", err)
	}
}
