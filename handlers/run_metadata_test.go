package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// metadataTrial sets its run metadata through the harness, reads it back
// and fails unless both answers are what it set.
const metadataTrial = `import determined as det

want = {"dataset": {"name": "digits", "rows": 1797}, "tags": ["a", "b"], "ok": True}
with det.core.init() as core_context:
    got = core_context.train.set_metadata(want)
    assert got == want, "set_metadata answered %r" % (got,)
    back = core_context.train.get_metadata()
    assert back == want, "get_metadata answered %r" % (back,)
    core_context.train.report_validation_metrics(1, {"loss": 1.0})
`

// sameJSON compares two JSON documents by value.
func sameJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %q: %v", what, got, err)
	}
	json.Unmarshal([]byte(want), &w)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestATrialSetsAndGetsItsRunMetadataThroughTheHarness(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte(metadataTrial), 0o644); err != nil {
		t.Fatal(err)
	}
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
		Config: "name: md\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n"},
		ContextTgz: tgz(t, dir)}
	var created resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	e := waitFor(t, m, token, created.Experiment.ID, 90*time.Second)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/trials", token, "", &trials)
	if e.State != resolute.StateCompleted || len(trials.Trials) != 1 {
		t.Fatalf("experiment %s with %d trials; logs:\n%s", e.State, len(trials.Trials), trialLogs(t, m, token, trials))
	}
	const want = `{"dataset": {"name": "digits", "rows": 1797}, "tags": ["a", "b"], "ok": true}`
	stored, err := m.DB.RunMetadata(context.Background(), trials.Trials[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "in the database", stored, want)
	var got resolute.RunMetadataResponse
	if code := api(t, m, "GET", "/api/v1/runs/"+itoa(trials.Trials[0].ID)+"/metadata", token, "", &got); code != 200 {
		t.Fatalf("GET as the owner: %d", code)
	}
	sameJSON(t, "GET as the owner", got.Metadata, want)
}

func TestRunMetadataIsSetByTheTrialsTaskOrItsOwnerAndReadByAnyoneSignedIn(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	bob := login(t, m, "bob", "s3cret-pw")
	active := false
	cfg := "name: x\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"
	var a, b resolute.ExperimentResponse
	for _, e := range []*resolute.ExperimentResponse{&a, &b} {
		api(t, m, "POST", "/api/v1/experiments", admin, jsonBody(resolute.CreateExperimentRequest{
			ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, Activate: &active}), e)
	}
	var ta, tb resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(a.Experiment.ID)+"/trials", admin, "", &ta)
	api(t, m, "GET", "/api/v1/experiments/"+itoa(b.Experiment.ID)+"/trials", admin, "", &tb)
	if len(ta.Trials) != 1 || len(tb.Trials) != 1 {
		t.Fatalf("trials %+v %+v", ta, tb)
	}
	own, other := ta.Trials[0].ID, tb.Trials[0].ID
	// A running allocation of trial A with a token the test knows.
	ctx := context.Background()
	taskToken, hash := auth.NewToken()
	if err := m.DB.CreateAllocation(ctx, "test-alloc", resolute.TrialTaskID(own), &own, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DB.StartAllocation(ctx, "test-alloc", nil, hash); err != nil {
		t.Fatal(err)
	}
	call := func(method string, trial int64, user, task, body string) (int, json.RawMessage) {
		t.Helper()
		req, _ := http.NewRequest(method, m.URL+"/api/v1/runs/"+itoa(trial)+"/metadata", strings.NewReader(body))
		if user != "" {
			req.Header.Set("Authorization", "Bearer "+user)
		}
		if task != "" {
			req.Header.Set(handlers.AllocationTokenHeader, "Bearer "+task)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out resolute.RunMetadataResponse
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Metadata
	}

	// Each step depends on the ones before it.
	steps := []struct {
		name                 string
		method               string
		trial                int64
		user, task, body     string
		code                 int
		wantAnswer, wantThen string // the answer, and what GET answers then; "" skips
	}{
		{"nothing set reads as {}", "GET", own, bob, "", "", 200, `{}`, ""},
		{"the task sets its trial's metadata", "POST", own, "", taskToken, `{"runId": 0, "metadata": {"step": 1, "nested": {"k": [1, 2]}}}`, 200,
			`{"step": 1, "nested": {"k": [1, 2]}}`, `{"step": 1, "nested": {"k": [1, 2]}}`},
		{"the owner replaces it", "POST", own, admin, "", `{"metadata": {"by": "owner"}}`, 200, `{"by": "owner"}`, `{"by": "owner"}`},
		{"another user may not set it", "POST", own, bob, "", `{"metadata": {"by": "bob"}}`, 403, "", `{"by": "owner"}`},
		{"another user reads it", "GET", own, bob, "", "", 200, `{"by": "owner"}`, ""},
		{"the task reads it", "GET", own, "", taskToken, "", 200, `{"by": "owner"}`, ""},
		{"the task may not set another trial's", "POST", other, "", taskToken, `{"metadata": {"by": "task"}}`, 403, "", ""},
		{"the task may not read another trial's", "GET", other, "", taskToken, "", 403, "", ""},
		{"metadata must be an object", "POST", own, admin, "", `{"metadata": [1]}`, 400, "", `{"by": "owner"}`},
		{"metadata must be there", "POST", own, admin, "", `{}`, 400, "", ""},
		{"an unknown run", "GET", 9999, admin, "", "", 404, "", ""},
		{"nobody", "GET", own, "", "", "", 401, "", ""},
	}
	for _, s := range steps {
		code, got := call(s.method, s.trial, s.user, s.task, s.body)
		if code != s.code {
			t.Errorf("%s: %d, want %d", s.name, code, s.code)
			continue
		}
		if s.wantAnswer != "" {
			sameJSON(t, s.name, got, s.wantAnswer)
		}
		if s.wantThen != "" {
			_, then := call("GET", own, admin, "", "")
			sameJSON(t, s.name+", then GET", then, s.wantThen)
		}
	}
}
