package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// TestStorageSecretsReachTheTaskButNoOneElse: an experiment on MinIO with
// its keys in the config. Its trial gets the real keys (it checkpoints into
// the bucket, which the mask would not open), and so does its GC task; the
// API, the pages, validation, the fork form and the master's log show only
// the mask; a fork made from the masked config takes its parent's keys back
// and runs.
func TestStorageSecretsReachTheTaskButNoOneElse(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	storageYAML := fmt.Sprintf("{type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q}",
		b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)
	cfg := slowConfig("secrets", 42, 0, 2) + "checkpoint_storage: " + storageYAML + "\n"
	exp := createSlow(t, m, token, cfg)
	if e := waitFor(t, m, token, exp, 90*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s: its trial did not get the real keys", e.State)
	}
	gc := waitGCTasks(t, m, 1)
	if gc[0].ExitCode == nil || *gc[0].ExitCode != 0 {
		t.Fatalf("the GC task did not get the real keys: %+v", gc[0])
	}

	shown := map[string]string{}
	apiGet := func(path string) {
		req, _ := http.NewRequest("GET", m.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		shown[path] = string(body)
	}
	for _, p := range []string{"/api/v1/experiments/" + itoa(exp), "/api/v1/experiments", "/api/v1/experiments/" + itoa(exp) + "/config",
		"/api/v1/tasks", "/api/v1/tasks/" + gc[0].ID} {
		apiGet(p)
	}
	var v struct {
		Config map[string]any `json:"config"`
	}
	api(t, m, "POST", "/api/v1/experiments", token, jsonBody(resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg, ValidateOnly: true}}), &v)
	shown["validation"] = fmt.Sprint(v.Config)
	c := browserClient(t)
	post(t, c, m, "/login", url.Values{"username": {"admin"}, "password": {""}, "redirect": {"/"}})
	for _, p := range []string{"/experiments/" + itoa(exp) + "?tab=configuration", "/tasks/" + gc[0].ID} {
		_, body := get(t, c, m, p)
		shown[p] = body
	}
	lines, _ := m.Logs.Since(0, 100000)
	var logs strings.Builder
	for _, l := range lines {
		logs.WriteString(l.Message + "\n")
	}
	shown["the master's log"] = logs.String()
	for where, text := range shown {
		if strings.Contains(text, b.SecretKey) || strings.Contains(text, b.AccessKey) {
			t.Errorf("%s shows a key:\n%.2000s", where, text)
		}
		if where != "the master's log" && where != "/api/v1/tasks" && !strings.Contains(text, resolute.Masked) {
			t.Errorf("%s shows no mask:\n%.2000s", where, text)
		}
	}

	// A fork made of what is shown (the masked config) runs with the keys.
	var orig struct {
		OriginalConfig string `json:"originalConfig"`
	}
	api(t, m, "GET", "/api/v1/experiments/"+itoa(exp)+"/config", token, "", &orig)
	var fork resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: orig.OriginalConfig},
		ParentID: exp}
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &fork); code != 200 {
		t.Fatalf("fork: %d %+v", code, fork)
	}
	if e := waitFor(t, m, token, fork.Experiment.ID, 90*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("fork %s", e.State)
	}
	stored, _ := m.DB.Experiment(context.Background(), fork.Experiment.ID)
	if !strings.Contains(string(stored.Config), b.SecretKey) {
		t.Errorf("the fork's stored config lacks the parent's key: %s", stored.Config)
	}
}

// TestATemplatesStorageKeysAreMaskedAndSurviveAnEdit: a template is shown
// (API, page) with its storage keys masked; edited from what is shown, it
// keeps the keys, and an experiment made with it gets them.
func TestATemplatesStorageKeysAreMaskedAndSurviveAnEdit(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	yaml := "# team storage\ncheckpoint_storage: {type: s3, bucket: b, access_key: AK-77, secret_key: SK-77}\n"
	if code := api(t, m, "POST", "/api/v1/templates", token, jsonBody(resolute.TemplateRequest{Name: "team", YAML: yaml}), nil); code != 200 {
		t.Fatalf("create: %d", code)
	}
	var got resolute.TemplateResponse
	api(t, m, "GET", "/api/v1/templates/team", token, "", &got)
	c := browserClient(t)
	post(t, c, m, "/login", url.Values{"username": {"admin"}, "password": {""}, "redirect": {"/"}})
	_, page := get(t, c, m, "/templates/team")
	for where, text := range map[string]string{"API yaml": got.Template.ConfigYAML, "API config": fmt.Sprint(got.Template.Config), "page": page} {
		if strings.Contains(text, "SK-77") || strings.Contains(text, "AK-77") || !strings.Contains(text, resolute.Masked) {
			t.Errorf("%s: %s", where, text)
		}
	}
	edited := strings.Replace(got.Template.ConfigYAML, "bucket: b,", "bucket: b, prefix: runs,", 1)
	if code := api(t, m, "PATCH", "/api/v1/templates/team", token, jsonBody(resolute.TemplateRequest{YAML: edited}), nil); code != 200 {
		t.Fatalf("edit: %d", code)
	}
	stored, err := m.DB.Template(context.Background(), "team")
	if err != nil || !strings.Contains(stored.ConfigYAML, "SK-77") || !strings.Contains(stored.ConfigYAML, "AK-77") || !strings.Contains(stored.ConfigYAML, "runs") {
		t.Fatalf("stored after the edit: %q %v", stored.ConfigYAML, err)
	}
	var e resolute.ExperimentResponse
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Template: "team",
		Config: "name: x\nentrypoint: sleep 1\nsearcher: {name: single, metric: loss}\n"}, Activate: new(bool)}
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
		t.Fatalf("create with the template: %d", code)
	}
	exp, _ := m.DB.Experiment(context.Background(), e.Experiment.ID)
	if !strings.Contains(string(exp.Config), "SK-77") {
		t.Errorf("the experiment lacks the template's key: %s", exp.Config)
	}
}
