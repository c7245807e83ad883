package handlers_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// standInTensorBoard is a stand-in for the `tensorboard` program: real
// TensorBoard ships on PyPI only, and tests must not need it. It takes
// TensorBoard's flags, prints TensorBoard's ready line, and answers every
// request under --path_prefix with its --logdir or --logdir_spec and the
// files it finds in those directories.
const standInTensorBoard = `#!/usr/bin/python3
import argparse, http.server, os

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--path_prefix", default="")
p.add_argument("--logdir", default="")
p.add_argument("--logdir_spec", default="")
a, extra = p.parse_known_args()

def body():
    dirs = [a.logdir] if a.logdir else [s.split(":", 1)[1] for s in a.logdir_spec.split(",")]
    files = [os.path.join(r, f) for d in dirs for r, _, fs in os.walk(d) for f in fs]
    return ("logdir=%s\nlogdir_spec=%s\nfiles=%s\nextra=%s\n" % (a.logdir, a.logdir_spec, " ".join(sorted(files)), " ".join(extra))).encode()

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if not self.path.startswith(a.path_prefix + "/"):
            self.send_error(404)
            return
        b = body()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer((a.host, a.port), Handler)
print("TensorBoard 2.x at http://%s:%d%s/ (Press CTRL+C to quit)" % (a.host, a.port, a.path_prefix), flush=True)
srv.serve_forever()
`

// tensorboardEnv writes the stand-in tensorboard and returns the task
// config that puts it on the TensorBoard's PATH.
func tensorboardEnv(t *testing.T) string {
	t.Helper()
	dir := handlerstest.TempDir(t) // the TensorBoard's user runs it
	if err := os.WriteFile(filepath.Join(dir, "tensorboard"), []byte(standInTensorBoard), 0o755); err != nil {
		t.Fatal(err)
	}
	return "environment: {environment_variables: [\"PATH=" + dir + ":/usr/local/bin:/usr/bin:/bin\"]}\n"
}

// tbTrial is a trial that writes an event file where the harness keeps its
// TensorBoard files, then reports a validation.
const tbTrial = `import determined as det

with det.core.init() as core_context:
    path = core_context.train.get_tensorboard_path()
    (path / "events.out.tfevents.stand-in").write_text("not really an event file")
    core_context.train.report_validation_metrics(1, {"loss": 1.0})
`

// createExperiment creates an experiment of the tbTrial, active or paused.
func createExperiment(t *testing.T, m *handlerstest.Master, token string, active bool) int64 {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte(tbTrial), 0o644); err != nil {
		t.Fatal(err)
	}
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
		Config: "name: tb\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n"},
		ContextTgz: tgz(t, dir), Activate: &active}
	var e resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
		t.Fatalf("create: %d", code)
	}
	return e.Experiment.ID
}

// readyTensorBoard launches a TensorBoard and waits until it serves.
func readyTensorBoard(t *testing.T, m *handlerstest.Master, token string, req resolute.CreateTaskRequest) resolute.Task {
	t.Helper()
	var tr resolute.TaskResponse
	if code := api(t, m, "POST", "/api/v1/tensorboards", token, jsonBody(req), &tr); code != 200 {
		t.Fatalf("launch: %d", code)
	}
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("the TensorBoard never got ready: %+v\n%s", task, fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs"))
	}
	return task
}

func TestATensorBoardServesItsExperimentsFilesToItsOwnerOnly(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bo"},"password":"s3cret-pw"}`, nil)
	bo := login(t, m, "bo", "s3cret-pw")
	cluster, err := m.DB.ClusterID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	env := tensorboardEnv(t)

	done := createExperiment(t, m, admin, true)
	if e := waitFor(t, m, admin, done, 90*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %d: %s", done, e.State)
	}
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(done)+"/trials", admin, "", &trials)
	if len(trials.Trials) != 1 {
		t.Fatalf("trials %+v", trials.Trials)
	}
	trial := trials.Trials[0].ID
	// The harness wrote the trial's file where the master looks.
	expDir := control.TensorBoardDir(m.CheckpointDir, cluster, done, 0)
	event := filepath.Join(control.TensorBoardDir(m.CheckpointDir, cluster, done, trial), "events.out.tfevents.stand-in")
	if _, err := os.Stat(event); err != nil {
		t.Fatalf("the trial's TensorBoard file: %v", err)
	}

	// One experiment: --logdir over its directory, through the proxy.
	task := readyTensorBoard(t, m, admin, resolute.CreateTaskRequest{Config: env, ExperimentIDs: []int64{done}})
	if task.Slots != 0 || task.ResourcePool != "default" || task.Description != "TensorBoard (experiment "+itoa(done)+")" ||
		len(task.ExperimentIDs) != 1 || task.ExperimentIDs[0] != done || task.ServiceAddress != "/tasks/"+task.ID+"/open" {
		t.Fatalf("tensorboard %+v", task)
	}
	code, body := proxyGet(t, m, "/proxy/"+task.ID+"/", admin)
	if code != 200 || !strings.Contains(body, "logdir="+expDir+"\n") || !strings.Contains(body, event) {
		t.Fatalf("the TensorBoard through the proxy: %d\n%s", code, body)
	}
	if code := api(t, m, "POST", "/api/v1/tasks/"+task.ID+"/open", bo, "", nil); code != 403 {
		t.Fatalf("another user: %d, want 403", code)
	}

	// A paused experiment and a trial of another: --logdir_spec, named; the
	// config's tensorboard_args come after the master's.
	paused := createExperiment(t, m, admin, false)
	task = readyTensorBoard(t, m, admin, resolute.CreateTaskRequest{Config: env + "tensorboard_args: [--samples_per_plugin=scalars=9]\n",
		ExperimentIDs: []int64{paused}, TrialIDs: []int64{trial}})
	want := "logdir_spec=experiment-" + itoa(paused) + ":" + control.TensorBoardDir(m.CheckpointDir, cluster, paused, 0) +
		",trial-" + itoa(trial) + ":" + control.TensorBoardDir(m.CheckpointDir, cluster, done, trial) + "\n"
	if code, body := proxyGet(t, m, "/proxy/"+task.ID+"/", admin); code != 200 || !strings.Contains(body, want) || !strings.Contains(body, event) ||
		!strings.Contains(body, "extra=--samples_per_plugin=scalars=9\n") {
		t.Fatalf("the TensorBoard of two: %d\n%s\nwant %s", code, body, want)
	}
	if task.Description != "TensorBoard (experiment "+itoa(paused)+"; trial "+itoa(trial)+")" {
		t.Fatalf("description %q", task.Description)
	}
}

func TestATensorBoardNeedsExperimentsOrTrialsThatExist(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	exp := createExperiment(t, m, admin, false)
	for name, tc := range map[string]struct {
		kind string
		req  resolute.CreateTaskRequest
		code int
		want string
	}{
		"none given": {"tensorboards", resolute.CreateTaskRequest{}, 400, "a TensorBoard needs experimentIds or trialIds"},
		"an unknown experiment": {"tensorboards", resolute.CreateTaskRequest{ExperimentIDs: []int64{exp, 999}}, 404,
			"experiment 999 not found"},
		"an unknown trial":           {"tensorboards", resolute.CreateTaskRequest{TrialIDs: []int64{999}}, 404, "trial 999 not found"},
		"experiments for a notebook": {"notebooks", resolute.CreateTaskRequest{ExperimentIDs: []int64{exp}}, 400, "only TensorBoards take them"},
	} {
		t.Run(name, func(t *testing.T) {
			var e resolute.ErrorResponse
			if code := api(t, m, "POST", "/api/v1/"+tc.kind, admin, jsonBody(tc.req), &e); code != tc.code || !strings.Contains(e.Error.Message, tc.want) {
				t.Fatalf("%d %q, want %d %q", code, e.Error.Message, tc.code, tc.want)
			}
		})
	}
	var tasks resolute.TasksResponse
	api(t, m, "GET", "/api/v1/tasks?all=true", admin, "", &tasks)
	if len(tasks.Tasks) != 0 {
		t.Fatalf("refused launches left tasks: %+v", tasks.Tasks)
	}
}

func TestTheExperimentPageLaunchesATensorBoard(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bo"},"password":"s3cret-pw"}`, nil)
	exp := createExperiment(t, m, admin, false)

	// Anyone who sees the experiment may launch one: it is theirs.
	c := signInPages(t, m, "bo", "s3cret-pw")
	_, body := get(t, c, m, "/experiments/"+itoa(exp))
	wants(t, "the experiment page", body, `action="/experiments/`+itoa(exp)+`/tensorboard"`, `id="action-tensorboard"`)
	resp, body := post(t, c, m, "/experiments/"+itoa(exp)+"/tensorboard", url.Values{})
	loc := regexp.MustCompile(`^/tasks/(tensorboard-\d+)$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != 303 || loc == nil {
		t.Fatalf("launch: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	var tr resolute.TaskResponse
	api(t, m, "GET", "/api/v1/tasks/"+loc[1], admin, "", &tr)
	if tr.Task.Username != "bo" || len(tr.Task.ExperimentIDs) != 1 || tr.Task.ExperimentIDs[0] != exp || tr.Task.Slots != 0 {
		t.Fatalf("the launched TensorBoard %+v", tr.Task)
	}
	if f := flashOn(t, c, m, "/tasks/"+loc[1]); f != "ok: Launched "+loc[1]+"." {
		t.Fatalf("flash %q", f)
	}
	// With htmx, the page is told where to go.
	resp, _ = post(t, c, m, "/experiments/"+itoa(exp)+"/tensorboard", url.Values{}, "HX-Request", "true")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("HX-Redirect"), "/tasks/tensorboard-") {
		t.Fatalf("htmx launch: %d %q", resp.StatusCode, resp.Header.Get("HX-Redirect"))
	}
	if resp, _ := post(t, c, m, "/experiments/999/tensorboard", url.Values{}); resp.StatusCode != 404 {
		t.Fatalf("an unknown experiment: %d", resp.StatusCode)
	}
}
