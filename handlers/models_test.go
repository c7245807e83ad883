package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// finishedCheckpoint runs the stdlib example and returns its experiment and
// its trial's latest checkpoint.
func finishedCheckpoint(t *testing.T, m *handlerstest.Master, token string) (int64, string) {
	t.Helper()
	dir := "../examples/core-api-stdlib"
	config, _ := os.ReadFile(filepath.Join(dir, "const.yaml"))
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: string(config),
		Overrides: []string{"hyperparameters.max_steps=50"}}, ContextTgz: tgz(t, dir)}
	var created resolute.ExperimentResponse
	api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &created)
	e := waitFor(t, m, token, created.Experiment.ID, 60*time.Second)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/trials", token, "", &trials)
	if e.State != resolute.StateCompleted || trials.Trials[0].LatestCheckpoint == "" {
		t.Fatalf("experiment %s, trials %+v", e.State, trials.Trials)
	}
	return e.ID, trials.Trials[0].LatestCheckpoint
}

func TestTheModelRegistry(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	expID, ckpt := finishedCheckpoint(t, m, token)

	var mr resolute.ModelResponse
	if code := api(t, m, "POST", "/api/v1/models", token, `{"name":"digits","description":"MLP","labels":["vision"],"metadata":{"team":"a"}}`, &mr); code != 200 {
		t.Fatalf("create model: %d", code)
	}
	var e resolute.ErrorResponse
	tests := map[string]struct {
		method, path, body string
		status             int
		message            string
	}{
		"a duplicate name is a conflict":     {"POST", "/api/v1/models", `{"name":"digits"}`, 409, `model "digits" already exists`},
		"metadata must be an object":         {"POST", "/api/v1/models", `{"name":"x","metadata":[1]}`, 400, "metadata: expected a JSON object"},
		"an unknown checkpoint is not found": {"POST", "/api/v1/models/digits/versions", `{"checkpointUuid":"00000000-0000-4000-8000-000000000000"}`, 404, "checkpoint 00000000-0000-4000-8000-000000000000 not found"},
		"a bad alias name is refused":        {"PUT", "/api/v1/models/digits/aliases/9lives", `{"version":1}`, 400, `alias: use a letter then up to 63 letters, digits, '-' or '_', got "9lives"`},
		"an alias to a missing version":      {"PUT", "/api/v1/models/digits/aliases/prod", `{"version":7}`, 404, `version 7 of model "digits" not found`},
		"an unknown model is not found":      {"GET", "/api/v1/models/nope/versions", "", 404, `model "nope" not found`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if code := api(t, m, tc.method, tc.path, token, tc.body, &e); code != tc.status || e.Error.Message != tc.message {
				t.Fatalf("got %d %q, want %d %q", code, e.Error.Message, tc.status, tc.message)
			}
		})
	}

	var v resolute.ModelVersionResponse
	for i := 1; i <= 2; i++ {
		if code := api(t, m, "POST", "/api/v1/models/digits/versions", token, `{"checkpointUuid":"`+ckpt+`","comment":"first"}`, &v); code != 200 || v.ModelVersion.Version != i {
			t.Fatalf("register %d: %d %+v", i, code, v)
		}
	}
	if v.ModelVersion.ExperimentID != expID || v.ModelVersion.StepsCompleted != 50 {
		t.Fatalf("version links: %+v", v.ModelVersion)
	}
	if code := api(t, m, "PUT", "/api/v1/models/digits/aliases/production", token, `{"version":1}`, &v); code != 200 || v.ModelVersion.Aliases[0] != "production" {
		t.Fatalf("alias: %d %+v", code, v.ModelVersion)
	}
	if code := api(t, m, "GET", "/api/v1/models/digits@production", token, "", &v); code != 200 || v.ModelVersion.Version != 1 || v.ModelVersion.CheckpointUUID != ckpt {
		t.Fatalf("NAME@ALIAS: %d %+v", code, v.ModelVersion)
	}
	api(t, m, "PUT", "/api/v1/models/digits/aliases/production", token, `{"version":2}`, nil)
	if api(t, m, "GET", "/api/v1/models/digits/versions/@production", token, "", &v); v.ModelVersion.Version != 2 {
		t.Fatalf("the alias did not move: %+v", v.ModelVersion)
	}
	if api(t, m, "GET", "/api/v1/models/digits/versions/latest", token, "", &v); v.ModelVersion.Version != 2 || v.ModelVersion.Validation == nil {
		t.Fatalf("latest: %+v", v.ModelVersion)
	}
	// A registered checkpoint cannot go: its experiment cannot be deleted.
	if code := api(t, m, "DELETE", "/api/v1/experiments/"+itoa(expID), token, "", &e); code != 409 || !strings.Contains(e.Error.Message, `version 1 of model "digits"`) {
		t.Fatalf("deleting the experiment of a registered checkpoint: %d %q", code, e.Error.Message)
	}
	var list resolute.ModelsResponse
	api(t, m, "GET", "/api/v1/models?labels=vision&name=dig", token, "", &list)
	if len(list.Models) != 1 || list.Models[0].NumVersions != 2 {
		t.Fatalf("search: %+v", list.Models)
	}
	if code := api(t, m, "DELETE", "/api/v1/models/digits", token, "", nil); code != 200 {
		t.Fatalf("delete model: %d", code)
	}
	if code := api(t, m, "DELETE", "/api/v1/experiments/"+itoa(expID), token, "", nil); code != 200 {
		t.Fatalf("delete experiment once unregistered: %d", code)
	}
}
