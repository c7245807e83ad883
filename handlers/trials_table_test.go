package handlers_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
)

func TestTheTrialsTabIsATableOfRunsThatHidesSharedHyperparameters(t *testing.T) {
	f := newPageFixture(t)
	c := signInPages(t, f.m, "admin", "")
	ctx := t.Context()
	admin, err := f.m.DB.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: `
name: shared
entrypoint: sleep 30
hyperparameters:
  lr: {type: double, minval: 0.001, maxval: 0.1}
  batch: 32
searcher: {name: random, metric: loss, max_trials: 3, max_length: 10}
`})
	if err != nil {
		t.Fatal(err)
	}
	// The random searcher's three trials: lr differs, batch is the same.
	trials, err := f.m.DB.Trials(ctx, e.ID)
	if err != nil || len(trials) != 3 {
		t.Fatalf("%d trials: %v", len(trials), err)
	}
	if err := f.m.DB.SetTrialEarlyExit(ctx, trials[1].ID, control.EarlyExitInvalidHP); err != nil {
		t.Fatal(err)
	}
	if err := f.m.DB.SetTrialState(ctx, trials[1].ID, resolute.StateCompleted); err != nil {
		t.Fatal(err)
	}
	path := "/experiments/" + itoa(e.ID)

	_, body := get(t, c, f.m, path+"?tab=trials")
	wants(t, "the trials tab", body, `id="constant-hparams"`, "<code>batch=32</code>", `id="show-constant"`,
		">lr</a></th>", ">Started</a>", ">Ended</a>", ">Duration</a>",
		`<span class="tag bad marker" title="EXITED_REASON_INVALID_HP">stopped: invalid hyperparameters</span>`)
	if strings.Contains(body, ">batch</a></th>") {
		t.Error("the trials tab shows a column every trial has the same")
	}
	if n := strings.Count(body, "stopped: invalid hyperparameters"); n != 1 {
		t.Errorf("%d trials are marked as stopped for invalid hyperparameters, want 1", n)
	}
	row := body[strings.Index(body, `id="trials-`+itoa(trials[1].ID)+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	if regexp.MustCompile(`<td>–</td>`).MatchString(row) {
		t.Errorf("the ended trial's row has no end: %s", row)
	}

	// Asked for all, the shared one is a column again, and the order and
	// the poll keep asking for all.
	_, body = get(t, c, f.m, path+"?tab=trials&all_hparams=1&sort=duration&desc=1")
	wants(t, "every hyperparameter", body, ">batch</a></th>", `id="hide-constant"`, `all_hparams=1&amp;desc=1&amp;sort=duration&amp;tab=trials"`,
		`sort=hp.lr&amp;tab=trials"`)
	if strings.Contains(body, "<code>batch=32</code>") {
		t.Error("with every column shown the page still lists batch as hidden")
	}
	// The one that ended stopped the clock; the running ones keep
	// counting: sorted by duration, longest first, it is last.
	order := regexp.MustCompile(`id="trials-(\d+)"`).FindAllStringSubmatch(body, -1)
	if len(order) != 3 || order[2][1] != itoa(trials[1].ID) {
		t.Errorf("by duration, longest first: %v", order)
	}

	// Sorting by a shared hyperparameter keeps its column.
	_, body = get(t, c, f.m, path+"?tab=trials&sort=hp.batch")
	wants(t, "sorted by batch", body, `sort=hp.batch&amp;tab=trials" class="sorted">batch`)
}
