package handlers_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestNewShellStartsAShellAndItsPageSaysWhatItDoes: the Tasks page's "New
// shell" starts a shell as `det shell start` does, owned by the caller, and
// the flash claims nothing its page's status line cannot back.
func TestNewShellStartsAShellAndItsPageSaysWhatItDoes(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	c := signInPages(t, m, "admin", "")
	_, body := get(t, c, m, "/tasks")
	wants(t, "the Tasks page", body, `id="launch-shell"`, `action="/tasks/launch-shell"`)
	resp, body := post(t, c, m, "/tasks/launch-shell", url.Values{})
	id := launched(t, resp, body)
	if f := flashOn(t, c, m, "/tasks/"+id); f != "ok: Launched "+id+"." {
		t.Fatalf("flash %q", f)
	}
	task := waitTask(t, m, admin, id, func(resolute.Task) bool { return true })
	if task.Type != resolute.TaskShell || task.Username != "admin" {
		t.Fatalf("shell %+v", task)
	}
	_, body = get(t, c, m, "/tasks/"+id)
	wants(t, "the shell's page", body, `id="task-status"`)
	post(t, c, m, "/tasks/"+id+"/kill", url.Values{"next": {"/tasks"}})
	waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	_, body = get(t, c, m, "/tasks/"+id)
	wants(t, "the ended shell's page", body, "The shell has ended; its log below says why.")
	if strings.Contains(body, "opens once") {
		t.Error("an ended shell's page says it opens once ready")
	}
}

// TestRegisterWithoutACheckpointExplainsAndAsksForOne: /models/register
// without a checkpoint is a page that says where checkpoints are and asks
// for one, not a bare 400; a malformed or unknown one is asked for again.
func TestRegisterWithoutACheckpointExplainsAndAsksForOne(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	tests := map[string]struct {
		query  string
		status int
		want   []string
	}{
		"no checkpoint": {"", 200, []string{`id="register-explained"`, `id="f-checkpoint_uuid"`, `id="register-checkpoint"`, "Checkpoints"}},
		"a malformed one": {"?checkpoint=nope", 400, []string{`id="f-checkpoint_uuid"`, `value="nope"`, `id="e-checkpoint_uuid"`,
			"Expected a checkpoint&#39;s UUID"}},
		"an unknown one": {"?checkpoint=00000000-0000-4000-8000-000000000000", 404, []string{`id="e-checkpoint_uuid"`,
			"There is no checkpoint 00000000-0000-4000-8000-000000000000."}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, c, m, "/models/register"+tc.query)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			wants(t, "the register page", body, tc.want...)
		})
	}
}

// TestAnExperimentsPageHasLinkedCrumbsAndACompactHeaderOffItsOverview.
func TestAnExperimentsPageHasLinkedCrumbsAndACompactHeaderOffItsOverview(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	_, body := get(t, c, f.m, f.path(""))
	wants(t, "the overview's crumbs", body, `id="breadcrumbs"`, `<a href="/experiments">Experiments</a>`,
		`<a href="/workspaces/`+itoa(f.e.WorkspaceID)+`">`, `<a href="/projects/`+itoa(f.e.ProjectID)+`">`)
	if strings.Contains(body, `id="experiment-more"`) {
		t.Error("the overview folds its header")
	}
	_, body = get(t, c, f.m, f.path("?tab=logs"))
	wants(t, "the logs tab", body, `id="experiment-more"`, `class="panel compact"`, `<a href="`+f.path("")+`">Experiment `+itoa(f.e.ID)+`</a>`,
		`id="experiment-scheduling"`)
	_, body = get(t, c, f.m, "/trials/"+itoa(f.trials[0].ID))
	wants(t, "the trial's crumbs", body, `<a href="`+f.path("")+`">Experiment `+itoa(f.e.ID)+`</a>`)
}
