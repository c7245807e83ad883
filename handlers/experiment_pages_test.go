package handlers_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// postMultipart posts the new-experiment form: fields, and files as
// field → name → content.
func postMultipart(t *testing.T, c *http.Client, m *handlerstest.Master, path string, fields map[string]string, files map[string][2]string) (*http.Response, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for field, f := range files {
		w, _ := mw.CreateFormFile(field, f[0])
		io.WriteString(w, f[1])
	}
	mw.Close()
	req, _ := http.NewRequest("POST", m.URL+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// zipDir packs a directory as a zip, with extra files by name.
func zipDir(t *testing.T, dir string, extra map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, _ := os.ReadFile(p)
		w, _ := zw.Create(filepath.ToSlash(rel))
		w.Write(data)
		return nil
	})
	for name, data := range extra {
		w, _ := zw.Create(name)
		io.WriteString(w, data)
	}
	zw.Close()
	return buf.String()
}

// signInPages signs a cookie-keeping client in to the pages.
func signInPages(t *testing.T, m *handlerstest.Master, user, password string) *http.Client {
	t.Helper()
	c := browserClient(t)
	if resp, _ := post(t, c, m, "/login", url.Values{"username": {user}, "password": {password}}); resp.StatusCode != 303 {
		t.Fatalf("login %s: %d", user, resp.StatusCode)
	}
	return c
}

// createdID reads the experiment id from the redirect after creating one.
func createdID(t *testing.T, resp *http.Response, body string) int64 {
	t.Helper()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || !regexp.MustCompile(`^/experiments/\d+$`).MatchString(loc) {
		t.Fatalf("create: %d %q\n%s", resp.StatusCode, loc, body)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/experiments/"), 10, 64)
	return id
}

func waitTerminal(t *testing.T, m *handlerstest.Master, id int64, timeout time.Duration) resolute.Experiment {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		e, err := m.DB.Experiment(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if resolute.Terminal(e.State) {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("experiment %d still %s after %s", id, e.State, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func wants(t *testing.T, what, body string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(body, p) {
			t.Errorf("%s lacks %s", what, p)
		}
	}
}

func TestExperimentPagesSubmitFollowAndManageARun(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")

	resp, body := get(t, c, m, "/experiments")
	if resp.StatusCode != 200 {
		t.Fatalf("list: %d", resp.StatusCode)
	}
	wants(t, "the empty list", body, `id="experiment-table"`, `hx-get="/experiments/table?"`, `href="/experiments/new"`, "No experiments yet")
	resp, body = get(t, c, m, "/experiments/new")
	if resp.StatusCode != 200 {
		t.Fatalf("new: %d", resp.StatusCode)
	}
	wants(t, "the form", body, `id="new-experiment"`, `enctype="multipart/form-data"`, `id="f-yaml"`, `id="f-code"`)

	// An invalid config comes back with every error beside the editor.
	bad := "entrypoint: python3 train.py\nmax_restarts: many\nsearcher: {name: single, metrc: loss}\n"
	resp, body = postMultipart(t, c, m, "/experiments/new", map[string]string{"yaml": bad}, nil)
	if resp.StatusCode != 422 {
		t.Fatalf("invalid config: %d", resp.StatusCode)
	}
	wants(t, "the rejected form", body, `id="e-yaml"`, "max_restarts: expected", "metrc", "max_restarts: many")

	// So does a zip that climbs out of its directory, or an unknown template.
	evil := zipDir(t, t.TempDir(), map[string]string{"../evil.py": "print('x')"})
	config, err := os.ReadFile("../examples/core-api-stdlib/const.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := strings.Replace(string(config), "max_steps: 400", "max_steps: 100", 1)
	resp, body = postMultipart(t, c, m, "/experiments/new", map[string]string{"yaml": good}, map[string][2]string{"code": {"code.zip", evil}})
	if resp.StatusCode != 422 {
		t.Fatalf("zip with ..: %d", resp.StatusCode)
	}
	wants(t, "the zip refusal", body, `id="e-code"`, "paths must stay inside the context directory", `id="choose-code-again"`)
	resp, body = postMultipart(t, c, m, "/experiments/new", map[string]string{"yaml": good, "template": "nope"}, nil)
	if resp.StatusCode != 422 || !strings.Contains(body, `id="e-template"`) {
		t.Fatalf("unknown template: %d", resp.StatusCode)
	}

	// A zip of the example is repacked as the tar.gz the trial unpacks.
	code := zipDir(t, "../examples/core-api-stdlib", nil)
	resp, body = postMultipart(t, c, m, "/experiments/new", map[string]string{"template": "", "project_id": "1"},
		map[string][2]string{"code": {"code.zip", code}, "config_file": {"const.yaml", good}})
	id := createdID(t, resp, body)
	resp, body = get(t, c, m, "/api/v1/experiments/"+itoa(id)+"/model_def")
	if resp.StatusCode != 200 || !slices.Contains(tarNames(t, body), "train.py") {
		t.Fatalf("model_def: %d %v", resp.StatusCode, tarNames(t, body))
	}

	_, body = get(t, c, m, "/experiments")
	wants(t, "the list", body, `id="experiment-`+itoa(id)+`"`, "core-api-stdlib-const", "Uncategorized")
	resp, body = get(t, c, m, "/experiments/table?state=PAUSED")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="experiment-table"`) || strings.Contains(body, `id="experiment-`+itoa(id)+`"`) {
		t.Fatalf("the table fragment filtered to PAUSED: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := get(t, c, m, "/experiments?state=sleepy"); resp.StatusCode != 400 {
		t.Fatalf("an unknown state: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, m, "/experiments?page=0"); resp.StatusCode != 400 {
		t.Fatalf("page 0: %d", resp.StatusCode)
	}

	if e := waitTerminal(t, m, id, 90*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s", e.State)
	}
	resp, body = get(t, c, m, "/experiments/"+itoa(id))
	if resp.StatusCode != 200 {
		t.Fatalf("experiment page: %d", resp.StatusCode)
	}
	wants(t, "the experiment page", body, `id="experiment-header"`, "COMPLETED", "(smaller is better)", `id="best-trials"`,
		`id="action-archive"`, `id="action-delete"`)
	for tab, parts := range map[string][]string{
		"trials":        {`id="trials"`},
		"checkpoints":   {`id="checkpoints"`, "/download"},
		"configuration": {`id="experiment-config"`, "searcher:\n"},
		"logs":          {`id="experiment-log-lines"`, "report_validation_metrics"},
	} {
		_, body := get(t, c, m, "/experiments/"+itoa(id)+"?tab="+tab)
		wants(t, "the "+tab+" tab", body, parts...)
	}
	if strings.Contains(body, `id="experiment-live" hx-get`) {
		t.Error("a finished experiment's page keeps polling")
	}
	trials, _ := m.DB.Trials(t.Context(), id)
	resp, body = get(t, c, m, "/trials/"+itoa(trials[0].ID))
	if resp.StatusCode != 200 {
		t.Fatalf("trial page: %d", resp.StatusCode)
	}
	wants(t, "the trial page", body, `id="validation-metrics"`, "<th>validation_loss</th>", `id="training-metrics"`, `id="allocations"`)
	if n := strings.Count(body[strings.Index(body, `id="validation-metrics"`):strings.Index(body, `id="training-metrics"`)], "<tr>"); n != 5 {
		t.Errorf("validation table has %d rows, want a header and 4 reports", n)
	}
	_, hp := get(t, c, m, "/trials/"+itoa(trials[0].ID)+"?tab=hyperparameters")
	wants(t, "the trial's hyperparameters", hp, `id="hparams"`, "max_steps")
	_, logs := get(t, c, m, "/trials/"+itoa(trials[0].ID)+"?tab=logs")
	wants(t, "the trial's logs", logs, `id="trial-log-lines"`)
	resp, body = get(t, c, m, "/trials/"+itoa(trials[0].ID)+"/logs/lines?after=0&level=INFO")
	if resp.StatusCode != 200 || !strings.Contains(body, `hx-swap-oob="beforeend:#trial-log-lines"`) {
		t.Fatalf("log lines: %d", resp.StatusCode)
	}

	// Actions: a finished experiment cannot be paused; it can be archived,
	// hidden from the list, unarchived and deleted.
	resp, _ = post(t, c, m, "/experiments/"+itoa(id)+"/pause", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/experiments/"+itoa(id) {
		t.Fatalf("pause a finished one: %d", resp.StatusCode)
	}
	_, body = get(t, c, m, "/experiments/"+itoa(id))
	wants(t, "the refusal", body, `class="flash error"`, "it cannot be changed")
	if resp, _ = post(t, c, m, "/experiments/"+itoa(id)+"/archive", nil); resp.StatusCode != 303 {
		t.Fatalf("archive: %d", resp.StatusCode)
	}
	if _, body = get(t, c, m, "/experiments"); strings.Contains(body, `id="experiment-`+itoa(id)+`"`) {
		t.Error("an archived experiment is listed")
	}
	if _, body = get(t, c, m, "/experiments?archived=1"); !strings.Contains(body, `id="experiment-`+itoa(id)+`"`) {
		t.Error("show archived does not list it")
	}
	post(t, c, m, "/experiments/"+itoa(id)+"/unarchive", nil)
	resp, _ = post(t, c, m, "/experiments/"+itoa(id)+"/delete", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/experiments" {
		t.Fatalf("delete: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ = get(t, c, m, "/experiments/"+itoa(id)); resp.StatusCode != 404 {
		t.Fatalf("a deleted experiment: %d", resp.StatusCode)
	}
}

func TestExperimentActionsFollowItsStateAndOwner(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	c := signInPages(t, m, "admin", "")
	cfg := "name: sleepy\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"
	resp, body := postMultipart(t, c, m, "/experiments/new", map[string]string{"yaml": cfg, "paused": "1"}, nil)
	id := createdID(t, resp, body)
	path := "/experiments/" + itoa(id)

	_, body = get(t, c, m, path)
	wants(t, "a paused experiment", body, "PAUSED", `id="action-activate"`, `id="action-kill"`, `hx-trigger="live:experiment:`+itoa(id)+` from:body,`)
	if strings.Contains(body, `id="action-delete"`) {
		t.Error("a paused experiment offers delete")
	}
	if _, body := get(t, c, m, path+"?tab=logs"); !strings.Contains(body, `id="experiment-log-poll" hx-get`) {
		t.Error("a paused experiment stops following its log")
	}
	if resp, body := get(t, c, m, path+"/live"); resp.StatusCode != 200 || !strings.HasPrefix(body, `<div id="experiment-live"`) {
		t.Fatalf("live fragment: %d", resp.StatusCode)
	}

	// Another user sees no buttons and may not press them.
	bob := signInPages(t, m, "bob", "s3cret-pw")
	if _, body := get(t, bob, m, path); strings.Contains(body, `id="experiment-actions"`) {
		t.Error("bob is offered actions on admin's experiment")
	}
	if resp, _ := post(t, bob, m, path+"/kill", nil); resp.StatusCode != 403 {
		t.Fatalf("bob kills admin's experiment: %d", resp.StatusCode)
	}

	resp, _ = post(t, c, m, path+"/kill", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != path {
		t.Fatalf("kill: %d", resp.StatusCode)
	}
	_, body = get(t, c, m, path)
	wants(t, "after kill", body, "Killing experiment "+itoa(id)+".")
	waitTerminal(t, m, id, 30*time.Second)
	if resp, _ := post(t, c, m, path+"/delete", nil); resp.StatusCode != 303 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
}

func tarNames(t *testing.T, tgz string) []string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(tgz))
	if err != nil {
		return nil
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			return names
		}
		names = append(names, h.Name)
	}
}
