package handlers_test

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

var tags = regexp.MustCompile(`<[^>]*>`)

// configText is the text of the element with id in a page, tags dropped.
func configText(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s in the page", id)
	}
	rest := body[i:]
	end := strings.Index(rest, "</pre>")
	if end < 0 {
		t.Fatalf("#%s has no <pre>", id)
	}
	return html.UnescapeString(tags.ReplaceAllString(rest[strings.Index(rest, "<pre"):end], ""))
}

// before fails unless the parts come in text in this order.
func before(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Errorf("%s: %q missing or out of order (want %q in order)\n%s", what, p, parts, text)
			return
		}
		at += i + len(p)
	}
}

// TestTheConfigurationTabShowsConfigsInTheirOrderHighlighted: the submitted
// config as written (order and comments kept), the expanded one in the
// reference's order with the hyperparameters as written, both highlighted
// and at full height, and an image the local resource manager never uses
// marked as not in effect.
func TestTheConfigurationTabShowsConfigsInTheirOrderHighlighted(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	cfg := `name: ordered # the name
searcher:
  name: random
  metric: loss
  max_trials: 2
  max_length: {batches: 10}
entrypoint: python3 train.py
hyperparameters:
  zeta: 3
  lr:
    type: log
    minval: -4
    maxval: -1
    base: 10
  alpha: {type: categorical, vals: [a, b]}
environment:
  image: example/never-pulled:1
`
	e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: cfg})
	if err != nil {
		t.Fatal(err)
	}
	c := signInPages(t, m, "admin", "")
	_, body := get(t, c, m, "/experiments/"+itoa(e.ID)+"?tab=configuration")

	const note = "  # not in effect: the local resource manager runs tasks without containers"
	submitted := configText(t, body, "experiment-original-config")
	if !strings.Contains(submitted, "image: example/never-pulled:1"+note) {
		t.Errorf("the submitted config's image is not marked:\n%s", submitted)
	}
	if strings.TrimSpace(strings.Replace(submitted, note, "", 1)) != strings.TrimSpace(cfg) {
		t.Errorf("the submitted config is not as written:\n%s", submitted)
	}
	expanded := configText(t, body, "experiment-config")
	before(t, "the expanded config's sections", expanded, "name: ordered", "entrypoint:", "hyperparameters:", "searcher:",
		"resources:", "max_restarts:", "log_policies:", "checkpoint_storage:", "environment:")
	before(t, "the hyperparameters as written", expanded, "zeta:", "lr:", "type: log", "minval: -4", "maxval: -1", "base: 10", "alpha:", "type: categorical")
	before(t, "the searcher's keys", expanded, "searcher:\n  name: random", "metric: loss", "max_trials: 2")

	// Highlighted, at full height.
	wants(t, "the highlighted config", body, `<pre class="yaml">`, `<span class="yk">name</span>: <span class="ystr">ordered</span> <span class="yc"># the name</span>`,
		`<span class="yk">max_trials</span>: <span class="ynum">2</span>`)
	// The image is marked: the local resource manager runs no containers.
	if !regexp.MustCompile(`<span class="unused" title="not in effect: the local resource manager runs tasks without containers">\s*<span class="yk">image</span>`).MatchString(body) {
		t.Errorf("environment.image is not marked unused:\n%s", expanded)
	}
	if strings.Contains(body, `class="unused" title="not in effect: the local resource manager runs tasks without containers"><span class="yk">entrypoint`) {
		t.Errorf("entrypoint marked unused")
	}
}
