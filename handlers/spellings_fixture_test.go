package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// spellingFixture is what the bodies of TestEveryBodyTakesEitherSpelling
// name: a trial with a running allocation (whose token reports as a task
// does), two workspaces with a project each, and a checkpoint.
type spellingFixture struct {
	m                    *handlerstest.Master
	admin, taskToken     string
	trial, exp, runID    int64
	alloc, checkpoint    string
	ws, ws2, proj, proj2 int64
}

func newSpellingFixture(t *testing.T) *spellingFixture {
	fx := &spellingFixture{m: handlerstest.Start(t, handlerstest.Options{})}
	fx.admin = login(t, fx.m, "admin", "")
	fx.trial, fx.taskToken = runningTrial(t, fx.m, fx.admin)
	fx.alloc = fmt.Sprintf("bench-%d", fx.trial)
	ctx := context.Background()
	tr, err := fx.m.DB.Trial(ctx, fx.trial)
	if err != nil {
		t.Fatal(err)
	}
	fx.exp, fx.runID = tr.ExperimentID, int64(tr.RunID)
	fx.checkpoint = "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
	if err := fx.m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: fx.checkpoint, TrialID: fx.trial, ExperimentID: fx.exp,
		AllocationID: fx.alloc, TaskID: tr.TaskID(), StepsCompleted: 5, Resources: map[string]int64{"state": 1}, Size: 1}); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []*int64{&fx.ws, &fx.ws2} {
		var w resolute.WorkspaceResponse
		fx.must(t, "POST", "/api/v1/workspaces", fmt.Sprintf(`{"name":"space-%p"}`, ws), &w)
		*ws = w.Workspace.ID
	}
	for i, p := range []*int64{&fx.proj, &fx.proj2} {
		var out resolute.ProjectResponse
		fx.must(t, "POST", fmt.Sprintf("/api/v1/workspaces/%d/projects", fx.ws), fmt.Sprintf(`{"name":"project-%d"}`, i), &out)
		*p = out.Project.ID
	}
	return fx
}

// must sends an administrator's request that has to succeed.
func (fx *spellingFixture) must(t *testing.T, method, path, body string, out any) {
	t.Helper()
	if code := api(t, fx.m, method, path, fx.admin, body, out); code != 200 {
		t.Fatalf("%s %s %s: status %d", method, path, body, code)
	}
}

// experiment creates a paused experiment in project and returns its id.
func (fx *spellingFixture) experiment(t *testing.T, name string, project int64) int64 {
	body, _ := json.Marshal(resolute.CreateExperimentRequest{Activate: new(false), ExperimentConfigRequest: resolute.ExperimentConfigRequest{
		ProjectID: project, Config: "name: " + name + "\nentrypoint: sleep 1000\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 0}\n"}})
	var e resolute.ExperimentResponse
	fx.must(t, "POST", "/api/v1/experiments", string(body), &e)
	return e.Experiment.ID
}

// modelWithVersion registers the fixture's checkpoint as version 1 of a
// new model called name.
func (fx *spellingFixture) modelWithVersion(t *testing.T, name string) {
	fx.must(t, "POST", "/api/v1/models", `{"name":"`+name+`"}`, nil)
	fx.must(t, "POST", "/api/v1/models/"+name+"/versions", `{"checkpointUuid":"`+fx.checkpoint+`"}`, nil)
}

// spelled is one request of Determined's shape, written in both
// spellings. Bodies and paths name the fixture and the spelling with
// {placeholders} (see TestEveryBodyTakesEitherSpelling).
type spelled struct {
	route        string // the route of routes.go, "METHOD /api/v1/pattern"
	path         string
	camel, snake string // as Determined's Python bindings send it; with the proto's snake_case names
	// task sends it with the trial's allocation token, as the harness
	// does; else as the administrator.
	task bool
	// setup makes what the request needs, once per spelling, and returns
	// more placeholders ("{token}" sends the request with that token).
	setup func(t *testing.T, fx *spellingFixture, s string) map[string]string
	// status is the answer's status (200 when 0); check looks at the
	// effect in the database or the answer.
	status int
	check  func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte)
}

// method is the HTTP method of the case's route.
func (tc spelled) method() string {
	method, _, _ := strings.Cut(tc.route, " ")
	return method
}

// sendAs sends a body as a client of the API does: a user's bearer token,
// or an allocation's token in the header Determined's harness uses.
func sendAs(t *testing.T, m *handlerstest.Master, method, path, token string, task bool, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, m.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if task {
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+token)
	} else {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

func fill(s string, v map[string]string) string {
	for k, x := range v {
		s = strings.ReplaceAll(s, k, x)
	}
	return s
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func jsonEqual(raw []byte, want string) bool {
	var a, b any
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && cmp.Equal(a, b)
}

// report is the stored metrics of the fixture's trial at step, of group.
func report(t *testing.T, fx *spellingFixture, group, step string) string {
	t.Helper()
	reports, err := fx.m.DB.TrialMetrics(context.Background(), fx.trial, group)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if fmt.Sprint(r.StepsCompleted) == step {
			var b bytes.Buffer
			json.Compact(&b, r.Metrics)
			return b.String()
		}
	}
	t.Fatalf("no %s report at step %s among %d", group, step, len(reports))
	return ""
}

// wantMessage checks that an error's answer says want.
func wantMessage(want string) func(*testing.T, *spellingFixture, map[string]string, []byte) {
	return func(t *testing.T, _ *spellingFixture, _ map[string]string, answer []byte) {
		var e resolute.ErrorResponse
		if json.Unmarshal(answer, &e); !strings.Contains(e.Error.Message, want) {
			t.Errorf("answer %s, want a message with %q", answer, want)
		}
	}
}

// checkTemplate checks that template name (with {s}) is in the fixture's
// second workspace and its config holds key, spelled as sent.
func checkTemplate(name, key string) func(*testing.T, *spellingFixture, map[string]string, []byte) {
	return func(t *testing.T, fx *spellingFixture, v map[string]string, _ []byte) {
		tpl, err := fx.m.DB.Template(context.Background(), fill(name, v))
		cfg, _ := json.Marshal(tpl.Config)
		if err != nil || tpl.WorkspaceID != fx.ws2 || !strings.Contains(string(cfg)+tpl.ConfigYAML, strings.Trim(key, `"`)) {
			t.Errorf("template %+v (%v)", tpl, err)
		}
	}
}

// withContext is a setup that puts a context directory holding
// marker-{s}.txt, base64 as JSON writes bytes, in {tgz}.
func withContext(t *testing.T, _ *spellingFixture, s string) map[string]string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	data := []byte("print('hello')\n")
	for _, name := range []string{"train.py", "marker-" + s + ".txt"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	return map[string]string{"{tgz}": base64.StdEncoding.EncodeToString(buf.Bytes())}
}

// TestAFieldInBothSpellingsIsRefusedByName sends bodies that give a
// field twice, once in each spelling, to a real master: each is a 400
// naming the field, and nothing is stored.
func TestAFieldInBothSpellingsIsRefusedByName(t *testing.T) {
	fx := newSpellingFixture(t)
	tests := map[string]struct {
		path, body, want string
		task             bool
	}{
		"a metrics report's run id": {path: "/api/v1/trials/{trial}/metrics", task: true,
			body: `{"metrics":{"trialRunId":{run},"trial_run_id":{run},"stepsCompleted":7,"metrics":{"avgMetrics":{"loss":1}}}}`,
			want: `metrics.trial_run_id: given twice, as "trial_run_id" and "trialRunId"`},
		"a metrics report's metrics": {path: "/api/v1/trials/{trial}/metrics", task: true,
			body: `{"metrics":{"stepsCompleted":7,"metrics":{"avgMetrics":{"loss":1},"avg_metrics":{"loss":2}}}}`,
			want: `metrics.metrics.avg_metrics: given twice, as "avg_metrics" and "avgMetrics"`},
		"an experiment's context": {path: "/api/v1/experiments",
			body: `{"config":"name: x\n","contextTgz":"AAAA","context_tgz":"AAAA"}`,
			want: `contextTgz: given twice, as "contextTgz" and "context_tgz"`},
		"an experiment's project": {path: "/api/v1/experiments",
			body: `{"config":"name: x\n","project_id":{proj},"projectId":{proj}}`,
			want: `projectId: given twice, as "projectId" and "project_id"`},
		"a job in the queue's updates": {path: "/api/v1/job-queues",
			body: `{"updates":[{"jobId":"experiment-{exp}","priority":1},{"jobId":"experiment-{exp}","aheadOf":"x","ahead_of":"y"}]}`,
			want: `updates[1].aheadOf: given twice, as "aheadOf" and "ahead_of"`},
	}
	v := map[string]string{"{trial}": fmt.Sprint(fx.trial), "{run}": fmt.Sprint(fx.runID), "{proj}": fmt.Sprint(fx.proj), "{exp}": fmt.Sprint(fx.exp)}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			token := fx.admin
			if tc.task {
				token = fx.taskToken
			}
			status, answer := sendAs(t, fx.m, "POST", fill(tc.path, v), token, tc.task, fill(tc.body, v))
			var e resolute.ErrorResponse
			if json.Unmarshal(answer, &e); status != 400 || !strings.Contains(e.Error.Message, tc.want) {
				t.Errorf("%d %s, want a 400 saying %s", status, answer, tc.want)
			}
		})
	}
	if reports, _ := fx.m.DB.TrialMetrics(context.Background(), fx.trial, "training"); len(reports) != 0 {
		t.Errorf("%d reports stored", len(reports))
	}
}
