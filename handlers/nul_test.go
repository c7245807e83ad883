package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestANULAnywhereIsA400NamingTheField: PostgreSQL stores no NUL in text
// nor \u0000 in jsonb; such input is refused up front, by name, whichever
// way it came.
func TestANULAnywhereIsA400NamingTheField(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	if code := api(t, m, "POST", "/api/v1/models", token, `{"name":"resnet"}`, nil); code != 200 {
		t.Fatalf("create a model: %d", code)
	}
	tests := map[string]struct {
		method, path, body string
		field              string
	}{
		"a JSON field":                      {"POST", "/api/v1/templates", `{"name":"t","yaml":"description: a\u0000b\n"}`, "yaml"},
		"a JSON field of a nested object":   {"PATCH", "/api/v1/models/resnet", `{"metadata":{"data":{"path":"/x\u0000"}}}`, "metadata.data.path"},
		"a key of a JSON object":            {"PATCH", "/api/v1/models/resnet", `{"metadata":{"a\u0000":1}}`, "metadata"},
		"an item of a JSON list":            {"PATCH", "/api/v1/models/resnet", `{"labels":["ok","n\u0000"]}`, "labels[1]"},
		"a bare JSON string":                {"POST", "/api/v1/users/1/password", `"pass\u0000word"`, "body"},
		"the login's username":              {"POST", "/api/v1/auth/login", `{"username":"ad\u0000min","password":""}`, "username"},
		"a query parameter":                 {"GET", "/api/v1/experiments?name=a%00b", "", "name"},
		"the path":                          {"GET", "/api/v1/models/res%00net", "", "path"},
		"a page's query parameter":          {"GET", "/experiments?q=%00", "", "q"},
		"the name of a template in the URL": {"DELETE", "/api/v1/templates/a%00", "", "path"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := tc.field + ": must not contain NUL characters"
			if strings.HasPrefix(tc.path, "/experiments") {
				// A page: the error page, not JSON.
				c := signInPages(t, m, "admin", "")
				resp, body := get(t, c, m, tc.path)
				if resp.StatusCode != 400 || !strings.Contains(body, want) {
					t.Errorf("%d, want 400 %q", resp.StatusCode, want)
				}
				return
			}
			var e resolute.ErrorResponse
			if code := api(t, m, tc.method, tc.path, token, tc.body, &e); code != 400 || e.Error.Message != want {
				t.Errorf("%d %q, want 400 %q", code, e.Error.Message, want)
			}
		})
	}

	// A form field, on a page.
	c := signInPages(t, m, "admin", "")
	resp, body := post(t, c, m, "/workspaces", url.Values{"name": {"speech"}, "description": {"a\x00b"}})
	if resp.StatusCode != 400 || !strings.Contains(body, "description: must not contain NUL characters") {
		t.Errorf("a form field: %d, want 400 naming description", resp.StatusCode)
	}
	// The form is parsed once, for the handler too: a clean one works.
	if resp, _ := post(t, c, m, "/workspaces", url.Values{"name": {"speech"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a clean form: %d", resp.StatusCode)
	}
	// Nothing was stored.
	var tmpl resolute.ErrorResponse
	if code := api(t, m, "GET", "/api/v1/templates/t", token, "", &tmpl); code != 404 {
		t.Errorf("the template with a NUL was stored: %d", code)
	}
}

// TestNamesOthersSeeInTheirTerminalsHoldNoControlCharacters: det prints
// experiment, model and workspace names and labels in other people's
// terminals, so an escape sequence in one is refused wherever it is set.
func TestNamesOthersSeeInTheirTerminalsHoldNoControlCharacters(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	config := func(extra string) string {
		body, _ := json.Marshal(resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
			Config: "entrypoint: sleep 1\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 0}\n" + extra}})
		return string(body)
	}
	var e resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, config("name: fine\ndescription: \"two\\nlines\"\n"), &e); code != 200 {
		t.Fatalf("a clean experiment: %d", code)
	}
	id := itoa(e.Experiment.ID)
	tests := map[string]struct {
		method, path, body string
		want               string
	}{
		"an experiment's name in its config": {"POST", "/api/v1/experiments", config("name: \"\\e]0;owned\\a\"\n"),
			"name: must not contain control characters"},
		"an experiment's description in its config": {"POST", "/api/v1/experiments", config("name: x\ndescription: \"\\e[8m\"\n"),
			"description: must not contain control characters other than newlines and tabs"},
		"an experiment's label in its config": {"POST", "/api/v1/experiments", config("name: x\nlabels: [\"\\u009b2J\"]\n"),
			"labels[0]: must not contain control characters"},
		"renaming an experiment":            {"PATCH", "/api/v1/experiments/" + id, `{"name":"\u001b[31mred"}`, "name: must not contain control characters"},
		"an experiment's description":       {"PATCH", "/api/v1/experiments/" + id, `{"description":"ok\rNOT"}`, "description: must not contain control characters other than newlines and tabs"},
		"an experiment's label":             {"PATCH", "/api/v1/experiments/" + id, `{"labels":["\u001b[5m"]}`, "labels: must be text without control characters"},
		"a model's name":                    {"POST", "/api/v1/models", `{"name":"\u001b[2Jwiped"}`, "name: must not contain control characters"},
		"a model's description":             {"POST", "/api/v1/models", `{"name":"m","description":"\u202eevil"}`, "description: must not contain control characters other than newlines and tabs"},
		"a workspace's name":                {"POST", "/api/v1/workspaces", `{"name":"\u0007bell"}`, "name: must not contain control characters"},
		"a project's description":           {"POST", "/api/v1/workspaces/1/projects", `{"name":"p","description":"\u001b[1m"}`, "description: must not contain control characters other than newlines and tabs"},
		"a template's name (an API object)": {"POST", "/api/v1/templates", `{"name":"t\u001b","yaml":"description: x\n"}`, "name: must not contain control characters"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var e resolute.ErrorResponse
			if code := api(t, m, tc.method, tc.path, token, tc.body, &e); code != 400 || !strings.Contains(e.Error.Message, tc.want) {
				t.Errorf("%d %q, want 400 %q", code, e.Error.Message, tc.want)
			}
		})
	}
}
