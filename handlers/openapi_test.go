package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// apiDoc is the part of the OpenAPI document the tests read.
type apiDoc struct {
	OpenAPI string `json:"openapi"`
	Paths   map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Summary     string `json:"summary"`
		Auth        string `json:"x-resolute-auth"`
		Handler     string `json:"x-resolute-handler"`
		Parameters  []struct{ Name, In string }
		RequestBody *struct {
			Content map[string]struct{ Schema map[string]any }
		} `json:"requestBody"`
		Responses map[string]struct {
			Content map[string]struct{ Schema map[string]any }
		}
	}
	Components struct {
		Schemas map[string]struct {
			Properties map[string]any
			Required   []string
		}
	}
}

// apiRoutesOf lists "METHOD pattern" of the router's /api/v1 routes, walked
// here apart from the code that writes the document.
func apiRoutesOf(t *testing.T) []string {
	t.Helper()
	r := handlers.New(handlers.Config{}, handlers.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Routes()
	var out []string
	err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, "/api/v1/") {
			out = append(out, method+" "+strings.TrimSuffix(route, "/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestTheOpenAPIDocumentIsTheRouter reads /api/v1/openapi.json as anyone
// may and checks it against the router: every route is documented, every
// documented operation is a route, each names its handler and says what
// its doc comment says (an empty summary means openapi_gen.go is older
// than the handler: run `make generate`), and every $ref resolves.
func TestTheOpenAPIDocumentIsTheRouter(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var doc apiDoc
	if code := api(t, m, "GET", "/api/v1/openapi.json", "", "", &doc); code != 200 {
		t.Fatalf("GET /api/v1/openapi.json = %d", code)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	var documented []string
	for path, methods := range doc.Paths {
		for method, op := range methods {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			if !strings.HasPrefix(op.Handler, "handle") {
				t.Errorf("%s %s: handler %q is no method of the Server", method, path, op.Handler)
			}
			if op.Summary == "" {
				t.Errorf("%s %s: no summary for %s: its doc comment is missing or openapi_gen.go is out of date (make generate)", method, path, op.Handler)
			}
			for _, p := range regexp.MustCompile(`\{(\w+)\}`).FindAllStringSubmatch(path, -1) {
				if !slices.ContainsFunc(op.Parameters, func(q struct{ Name, In string }) bool { return q.Name == p[1] && q.In == "path" }) {
					t.Errorf("%s %s: path parameter %s is not listed", method, path, p[1])
				}
			}
		}
	}
	sort.Strings(documented)
	routes := apiRoutesOf(t)
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not documented", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("documented %s is no route", d)
		}
	}
	if len(routes) < 100 {
		t.Errorf("only %d routes under /api/v1: the walk missed some", len(routes))
	}

	raw, _ := json.Marshal(doc.Paths)
	for _, ref := range regexp.MustCompile(`"\$ref":"#/components/schemas/(\w+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("$ref %s does not resolve", ref[1])
		}
	}
}

// TestTheOpenAPIDocumentSaysWhatTheHandlersDo spot-checks what the
// document took from the handlers' source and the Go types.
func TestTheOpenAPIDocumentSaysWhatTheHandlersDo(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var doc apiDoc
	api(t, m, "GET", "/api/v1/openapi.json", "", "", &doc)
	ref := func(s map[string]any) string {
		r, _ := s["$ref"].(string)
		return strings.TrimPrefix(r, "#/components/schemas/")
	}
	create := doc.Paths["/api/v1/experiments"]["post"]
	if create.RequestBody == nil || ref(create.RequestBody.Content["application/json"].Schema) != "CreateExperimentRequest" {
		t.Errorf("POST /api/v1/experiments request = %+v, want CreateExperimentRequest", create.RequestBody)
	}
	if s := doc.Components.Schemas["CreateExperimentRequest"]; s.Properties["config"] == nil || s.Properties["contextTgz"] == nil {
		t.Errorf("CreateExperimentRequest has no config and contextTgz (its embedded struct's and its own fields): %v", s.Properties)
	}
	if got := ref(doc.Paths["/api/v1/experiments/{id}"]["get"].Responses["200"].Content["application/json"].Schema); got != "ExperimentResponse" {
		t.Errorf("GET /api/v1/experiments/{id} answers %q, want ExperimentResponse", got)
	}
	if s := doc.Paths["/api/v1/master/logs"]["get"].Responses["200"].Content; s["application/x-ndjson"].Schema == nil {
		t.Errorf("GET /api/v1/master/logs is not a stream: %v", s)
	}
	if e := doc.Paths["/api/v1/auth/login"]["post"].Responses["default"].Content["application/json"].Schema; ref(e) != "ErrorResponse" {
		t.Errorf("errors are %v, want ErrorResponse", e)
	}
	for path, want := range map[string]string{
		"POST /api/v1/auth/login":          "anyone",
		"GET /api/v1/experiments":          "user",
		"POST /api/v1/users":               "administrator",
		"POST /api/v1/trials/{id}/metrics": "task or user",
	} {
		method, p, _ := strings.Cut(path, " ")
		if got := doc.Paths[p][strings.ToLower(method)].Auth; got != want {
			t.Errorf("%s: auth %q, want %q", path, got, want)
		}
	}
}

// TestTheAPIDocsPageListsEveryOperation renders /docs/api, which needs no
// session, and finds an element for every documented operation.
func TestTheAPIDocsPageListsEveryOperation(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	var doc apiDoc
	api(t, m, "GET", "/api/v1/openapi.json", "", "", &doc)
	resp, err := http.Get(m.URL + "/docs/api")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs/api = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	page := string(body)
	for path, methods := range doc.Paths {
		for method, op := range methods {
			if !strings.Contains(page, `id="op-`+op.OperationID+`"`) {
				t.Errorf("the page has no row for %s %s (op-%s)", method, path, op.OperationID)
			}
		}
	}
	for _, want := range []string{`id="schema-CreateExperimentRequest"`, `href="/api/v1/openapi.json"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("the page loads a script; it needs none")
	}
}
