package handlers_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTemplatesThroughTheAPI(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	var tr resolute.TemplateResponse
	body := jsonBody(resolute.TemplateRequest{Name: "gpu-defaults", YAML: "# shared\nresources: {slots_per_trial: 2}\n"})
	if code := api(t, m, "POST", "/api/v1/templates", admin, body, &tr); code != 200 || tr.Template.Name != "gpu-defaults" {
		t.Fatalf("create: %d %+v", code, tr)
	}
	if tr.Template.Config["resources"] == nil || !strings.HasPrefix(tr.Template.ConfigYAML, "# shared") {
		t.Fatalf("template keeps its YAML and shows it as an object: %+v", tr.Template)
	}
	var e resolute.ErrorResponse
	if code := api(t, m, "POST", "/api/v1/templates", admin, body, &e); code != 409 {
		t.Fatalf("duplicate: %d %+v", code, e)
	}
	bad := jsonBody(resolute.TemplateRequest{Name: "bad", YAML: "resources: {slot_per_trial: 2}\n"})
	if code := api(t, m, "POST", "/api/v1/templates", admin, bad, &e); code != 400 ||
		e.Error.Message != "resources.slot_per_trial: unknown key (did you mean slots_per_trial?) (line 1)" {
		t.Fatalf("invalid template: %d %q", code, e.Error.Message)
	}
	// Determined's clients send the config as an object to PUT.
	put := `{"config": {"max_restarts": 1}}`
	if code := api(t, m, "PUT", "/api/v1/templates/gpu-defaults", admin, put, &tr); code != 200 || tr.Template.Config["max_restarts"] != float64(1) {
		t.Fatalf("put: %d %+v", code, tr)
	}
	var list resolute.TemplatesResponse
	api(t, m, "GET", "/api/v1/templates", admin, "", &list)
	if len(list.Templates) != 1 {
		t.Fatalf("list: %+v", list)
	}

	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"kim"},"password":"s3cret-pw"}`, nil)
	kim := login(t, m, "kim", "s3cret-pw")
	if code := api(t, m, "DELETE", "/api/v1/templates/gpu-defaults", kim, "", &e); code != 403 {
		t.Fatalf("another user deleting a template: %d", code)
	}
	if code := api(t, m, "DELETE", "/api/v1/templates/gpu-defaults", admin, "", nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code := api(t, m, "GET", "/api/v1/templates/gpu-defaults", admin, "", &e); code != 404 {
		t.Fatalf("get deleted: %d", code)
	}
}

const asha = `
name: mnist-asha
entrypoint: python3 train.py
hyperparameters:
  lr: {type: log, minval: -4, maxval: -1}
  layers: {type: int, minval: 1, maxval: 4}
searcher:
  name: adaptive_asha
  metric: validation_loss
  max_trials: 16
  max_time: 256
  time_metric: batches
  divisor: 4
  max_rungs: 3
`

func TestPreviewAndValidate(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	var p struct {
		Plan struct {
			Trials   int
			Brackets []struct {
				Rungs []struct{ Target, Trials int }
			}
		}
		Summary string
	}
	if code := api(t, m, "POST", "/api/v1/preview-hp-search", token, jsonBody(resolute.ExperimentConfigRequest{Config: asha}), &p); code != 200 {
		t.Fatalf("preview: %d", code)
	}
	if p.Plan.Trials != 16 || len(p.Plan.Brackets) != 2 || p.Plan.Brackets[0].Rungs[0].Target != 16 || !strings.Contains(p.Summary, "adaptive_asha") {
		t.Fatalf("plan = %+v\n%s", p.Plan, p.Summary)
	}
	var e resolute.ErrorResponse
	broken := strings.Replace(asha, "max_trials: 16", "max_trials: -1", 1) + "resources: {slot_per_trial: 1}\n"
	if code := api(t, m, "POST", "/api/v1/preview-hp-search", token, jsonBody(resolute.ExperimentConfigRequest{Config: broken}), &e); code != 400 {
		t.Fatalf("broken config: %d", code)
	}
	for _, want := range []string{"searcher.max_trials", "resources.slot_per_trial: unknown key (did you mean slots_per_trial?)"} {
		if !strings.Contains(e.Error.Message, want) {
			t.Errorf("errors %q lack %q", e.Error.Message, want)
		}
	}

	var v resolute.ValidateResponse
	req := resolute.ExperimentConfigRequest{Config: asha, ValidateOnly: true, Overrides: []string{"max_restarts=0"}}
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &v); code != 200 || v.Config["max_restarts"] != float64(0) {
		t.Fatalf("validate: %d %+v", code, v.Config["max_restarts"])
	}
	if v.Config["checkpoint_storage"] == nil {
		t.Fatal("the master's checkpoint storage is not in the expanded config")
	}
	var list resolute.ExperimentsResponse
	api(t, m, "GET", "/api/v1/experiments", token, "", &list)
	if len(list.Experiments) != 0 {
		t.Fatalf("validateOnly created %d experiments", len(list.Experiments))
	}
}

func TestTemplatePagesShowErrorsInline(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := browserClient(t)
	post(t, c, m, "/login", url.Values{"username": {"admin"}, "password": {""}})
	resp, body := post(t, c, m, "/templates", url.Values{"name": {"t1"}, "workspace_id": {"1"}, "yaml": {"max_restarts: many\nsearcher: {name: bogus}\n"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-yaml"`) || !strings.Contains(body, "max_restarts: expected") {
		t.Fatalf("invalid template form: %d\n%s", resp.StatusCode, body)
	}
	if !strings.Contains(body, "max_restarts: many") {
		t.Fatal("the rejected YAML is not kept in the editor")
	}
	resp, _ = post(t, c, m, "/templates", url.Values{"name": {"t1"}, "workspace_id": {"1"}, "yaml": {"max_restarts: 3\n"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/templates/t1" {
		t.Fatalf("create template form: %d", resp.StatusCode)
	}
	resp, body = post(t, c, m, "/templates/t1", url.Values{"yaml": {"max_restarts: -1\n"}})
	if resp.StatusCode != 422 || !strings.Contains(body, "max_restarts") {
		t.Fatalf("invalid edit: %d", resp.StatusCode)
	}
	_, body = get(t, c, m, "/templates")
	if !strings.Contains(body, `id="templates"`) || !strings.Contains(body, ">t1</a>") {
		t.Fatal("templates page does not list t1")
	}
}
