package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// postOK posts a form and fails unless it redirects (303) to want.
func postOK(t *testing.T, c *http.Client, m *handlerstest.Master, path string, form url.Values, want string) {
	t.Helper()
	resp, body := post(t, c, m, path, form)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Fatalf("POST %s: %d %q, want 303 %q\n%s", path, resp.StatusCode, resp.Header.Get("Location"), want, body)
	}
}

func TestModelPagesCreateRegisterEditAndAlias(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	expID, ckpt := finishedCheckpoint(t, m, token)
	c := signInPages(t, m, "admin", "")

	resp, body := get(t, c, m, "/models")
	if resp.StatusCode != 200 {
		t.Fatalf("list: %d", resp.StatusCode)
	}
	wants(t, "the empty registry", body, `id="model-filter"`, `id="new-model"`, "No models yet", `aria-current="page"`)
	postOK(t, c, m, "/models", url.Values{"name": {"digits"}, "description": {"an MLP"}, "labels": {"vision, mlp, vision"}}, "/models/digits")
	_, body = get(t, c, m, "/models/digits")
	wants(t, "the new model's page", body, "Created model digits.", `id="model-about"`, "an MLP", `id="versions"`, "No versions yet")
	postOK(t, c, m, "/models", url.Values{"name": {"two words"}}, "/models/two%20words")
	if resp, _ := get(t, c, m, "/models/two%20words"); resp.StatusCode != 200 {
		t.Errorf("a model named with a space: %d", resp.StatusCode)
	}

	rejected := map[string]struct {
		path  string
		form  url.Values
		field string
		error string
	}{
		"a duplicate model name": {"/models", url.Values{"name": {"digits"}}, "name", `model &#34;digits&#34; already exists`},
		"an empty model name":    {"/models", url.Values{"name": {""}}, "name", "must not be empty"},
		"metadata not an object": {"/models/digits/edit", url.Values{"metadata": {"[1, 2]"}}, "metadata", "expected a JSON object"},
		"metadata not JSON":      {"/models/digits/edit", url.Values{"metadata": {"{team"}}, "metadata", "expected a JSON object"},
		"an unknown checkpoint":  {"/models/register", url.Values{"checkpoint_uuid": {"00000000-0000-4000-8000-000000000000"}, "model_name": {"digits"}}, "checkpoint_uuid", "not found"},
		"no model chosen":        {"/models/register", url.Values{"checkpoint_uuid": {ckpt}}, "model_name", "choose a model"},
		"a missing model":        {"/models/register", url.Values{"checkpoint_uuid": {ckpt}, "model_name": {"nope"}}, "model_name", `model &#34;nope&#34; not found`},
	}
	for name, tc := range rejected {
		t.Run(name, func(t *testing.T) {
			resp, body := post(t, c, m, tc.path, tc.form)
			if resp.StatusCode != 422 {
				t.Fatalf("%d, want 422", resp.StatusCode)
			}
			wants(t, "the rejected form", body, `id="e-`+tc.field+`"`, tc.error)
		})
	}
	// The rejected metadata edit comes back open with what was typed.
	_, body = post(t, c, m, "/models/digits/edit", url.Values{"metadata": {"[1, 2]"}})
	wants(t, "the rejected metadata", body, `<details class="edit" id="edit-metadata" open`, "[1, 2]</textarea>")

	// Register from the experiment's checkpoint table: a new model, then
	// an existing one twice.
	_, body = get(t, c, m, "/experiments/"+itoa(expID)+"?tab=checkpoints")
	wants(t, "the experiment's checkpoints", body, `id="checkpoint-`+ckpt+`"`, `id="register-`+ckpt+`"`, `action="/models/register"`, `<option value="digits">digits</option>`)
	postOK(t, c, m, "/models/register", url.Values{"checkpoint_uuid": {ckpt}, "new_model_name": {"fresh"}}, "/models/fresh/versions/1")
	postOK(t, c, m, "/models/register", url.Values{"checkpoint_uuid": {ckpt}, "model_name": {"digits"}}, "/models/digits/versions/1")
	postOK(t, c, m, "/models/register", url.Values{"checkpoint_uuid": {ckpt}, "model_name": {"digits"}}, "/models/digits/versions/2")
	postOK(t, c, m, "/models/register", url.Values{"checkpoint_uuid": {ckpt}, "model_name": {"made"}, "create_if_missing": {"1"}}, "/models/made/versions/1")
	_, body = get(t, c, m, "/experiments/"+itoa(expID)+"?tab=checkpoints")
	wants(t, "a registered checkpoint", body, `class="tag alias" href="/models/`)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(expID)+"/trials", token, "", &trials)
	_, body = get(t, c, m, "/trials/"+itoa(trials.Trials[0].ID)+"?tab=checkpoints")
	wants(t, "the trial's checkpoints", body, `id="register-`+ckpt+`"`)
	_, body = get(t, c, m, "/models/register?checkpoint="+ckpt)
	wants(t, "the register page", body, `id="register-checkpoint"`, `id="f-model_name"`, `id="f-new_model_name"`)

	// The model page: versions, edits in place, aliases.
	_, body = get(t, c, m, "/models/digits")
	wants(t, "the model page", body, `id="version-1"`, `id="version-2"`, `href="/models/digits/versions/2"`, `href="/experiments/`+itoa(expID)+`"`,
		`data-confirm="Delete model digits and its 2 versions?"`, `id="alias-form"`, `id="f-version"`, "validation_loss")
	postOK(t, c, m, "/models/digits/edit", url.Values{"description": {"a better MLP"}}, "/models/digits")
	postOK(t, c, m, "/models/digits/edit", url.Values{"metadata": {`{"team": "b"}`}, "labels": {"b, a,  b"}, "notes": {"# Digits\nTrained on MNIST."}}, "/models/digits")
	var mr resolute.ModelResponse
	api(t, m, "GET", "/api/v1/models/digits", token, "", &mr)
	if got := mr.Model; got.Description != "a better MLP" || compactJSON(got.Metadata) != `{"team":"b"}` || strings.Join(got.Labels, ",") != "b,a" || got.Notes != "# Digits\nTrained on MNIST." {
		t.Errorf("after the edits: %+v", got)
	}
	_, body = get(t, c, m, "/models/digits")
	wants(t, "the edited model", body, `<p id="description-text">a better MLP</p>`, "Trained on MNIST.", "&#34;team&#34;: &#34;b&#34;")

	var v resolute.ModelVersionResponse
	postOK(t, c, m, "/models/digits/aliases", url.Values{"alias": {"production"}, "version": {"1"}}, "/models/digits")
	if api(t, m, "GET", "/api/v1/models/digits@production", token, "", &v); v.ModelVersion.Version != 1 {
		t.Errorf("production: %+v", v.ModelVersion)
	}
	postOK(t, c, m, "/models/digits/aliases", url.Values{"alias": {"production"}, "version": {"2"}}, "/models/digits")
	if api(t, m, "GET", "/api/v1/models/digits@production", token, "", &v); v.ModelVersion.Version != 2 {
		t.Errorf("the alias did not move: %+v", v.ModelVersion)
	}
	_, body = get(t, c, m, "/models/digits")
	wants(t, "the aliases", body, `id="alias-production"`, `action="/models/digits/aliases/production/delete"`)
	resp, body = post(t, c, m, "/models/digits/aliases", url.Values{"alias": {"staging"}, "version": {"7"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-version"`) || !strings.Contains(body, `version 7 of model`) {
		t.Errorf("an alias to a missing version: %d", resp.StatusCode)
	}
	resp, body = post(t, c, m, "/models/digits/aliases", url.Values{"alias": {"9lives"}, "version": {"1"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-alias"`) || !strings.Contains(body, `value="9lives"`) {
		t.Errorf("a bad alias: %d", resp.StatusCode)
	}
	postOK(t, c, m, "/models/digits/aliases/production/delete", nil, "/models/digits")
	if code := api(t, m, "GET", "/api/v1/models/digits@production", token, "", nil); code != 404 {
		t.Errorf("a removed alias: %d", code)
	}

	// The version page: checkpoint, sources, metrics, download, edits.
	_, body = get(t, c, m, "/models/digits/versions/1")
	wants(t, "the version page", body, `id="version-uuid">`+ckpt, `id="version-experiment" href="/experiments/`+itoa(expID)+`"`,
		`id="version-trial" href="/trials/`, `id="version-metrics"`, "validation_loss", `id="validation-history"`,
		`href="/api/v1/checkpoints/`+ckpt+`/download"`, `id="edit-version"`, `id="delete-version"`)
	resp, body = post(t, c, m, "/models/digits/versions/1/edit", url.Values{"metadata": {"nope"}, "notes": {"kept"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-metadata"`) || !strings.Contains(body, ">kept</textarea>") {
		t.Errorf("a version edit with bad metadata: %d", resp.StatusCode)
	}
	postOK(t, c, m, "/models/digits/versions/1/edit", url.Values{"name": {"first"}, "notes": {"good"}, "metadata": {""}}, "/models/digits/versions/1")
	if api(t, m, "GET", "/api/v1/models/digits/versions/1", token, "", &v); v.ModelVersion.Name != "first" || v.ModelVersion.Notes != "good" {
		t.Errorf("after the version edit: %+v", v.ModelVersion)
	}

	// The list's filter lives in the query string.
	filters := map[string]struct {
		query       string
		has, hasNot []string
	}{
		"a label":        {"?label=a", []string{`href="/models/digits"`}, []string{`href="/models/fresh"`}},
		"a search":       {"?search=fre", []string{`href="/models/fresh"`}, []string{`href="/models/digits"`}},
		"sorted by name": {"?sort=name", []string{`<option value="name" selected>`}, nil},
	}
	for name, tc := range filters {
		t.Run(name, func(t *testing.T) {
			_, body := get(t, c, m, "/models"+tc.query)
			wants(t, "the filtered list", body, tc.has...)
			for _, no := range tc.hasNot {
				if strings.Contains(body, no) {
					t.Errorf("the list holds %s", no)
				}
			}
		})
	}
	if resp, _ := get(t, c, m, "/models?sort=bogus"); resp.StatusCode != 400 {
		t.Errorf("an unknown sort: %d", resp.StatusCode)
	}
	postOK(t, c, m, "/models/fresh/archive", nil, "/models/fresh")
	if _, body = get(t, c, m, "/models"); strings.Contains(body, `href="/models/fresh"`) {
		t.Error("an archived model is listed")
	}
	if _, body = get(t, c, m, "/models?archived=1"); !strings.Contains(body, `href="/models/fresh"`) {
		t.Error("an archived model is missing with archived=1")
	}

	// Someone else sees the model but may not change it.
	api(t, m, "POST", "/api/v1/users", token, `{"user":{"username":"bob"},"password":"builder-pw"}`, nil)
	bob := signInPages(t, m, "bob", "builder-pw")
	_, body = get(t, bob, m, "/models/digits")
	if strings.Contains(body, `id="alias-form"`) || strings.Contains(body, `id="edit-description"`) || strings.Contains(body, `id="model-delete"`) {
		t.Error("bob is offered changes to admin's model")
	}
	if resp, _ := post(t, bob, m, "/models/digits/edit", url.Values{"description": {"mine"}}); resp.StatusCode != 403 {
		t.Errorf("bob editing admin's model: %d", resp.StatusCode)
	}
	if _, body = get(t, bob, m, "/experiments/"+itoa(expID)); strings.Contains(body, `<option value="digits">`) {
		t.Error("bob is offered admin's model to register into")
	}

	postOK(t, c, m, "/models/digits/versions/2/delete", nil, "/models/digits")
	postOK(t, c, m, "/models/digits/delete", nil, "/models")
	_, body = get(t, c, m, "/models")
	wants(t, "the list after a delete", body, "Deleted model digits and its 1 versions.")
	if code := api(t, m, "GET", "/api/v1/models/digits", token, "", nil); code != 404 {
		t.Errorf("a deleted model: %d", code)
	}
}

func compactJSON(raw []byte) string {
	return strings.Join(strings.Fields(string(raw)), "")
}
