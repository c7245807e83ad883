package handlers_test

import (
	"archive/tar"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestTheNewExperimentFormChecksItsConfigAsItIsTyped(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	_, body := get(t, c, m, "/experiments/new")
	wants(t, "the form", body, `hx-post="/experiments/new/validate"`, `id="yaml-check"`, `aria-describedby="yaml-check"`, `id="f-code_files"`)

	tests := map[string]struct {
		form   url.Values
		status int
		want   []string
	}{
		"a valid config says what it will do": {url.Values{"yaml": {"name: ok\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n"}},
			200, []string{`id="yaml-valid"`, `Valid: &#34;ok&#34;, single searcher on loss, 1 trial(s).`}},
		"nothing typed yet is no error": {url.Values{"yaml": {"  "}}, 200, []string{`<div id="yaml-check"`}},
		"each problem names its key path and line": {url.Values{"yaml": {"entrypoint: python3 train.py\nmax_restarts: many\nsearcher: {name: single, metrc: loss}\n"}},
			422, []string{`id="yaml-problems"`, `<span class="path">max_restarts</span>`, "(line 2)", "metrc"}},
		"bad YAML is a problem too": {url.Values{"yaml": {"searcher: [unclosed\n"}}, 422, []string{`id="yaml-problems"`}},
		"an unknown template is named": {url.Values{"yaml": {"entrypoint: x\nsearcher: {name: single, metric: loss}\n"}, "template": {"ghost"}},
			422, []string{`<span class="path">template</span>`, `template &#34;ghost&#34; not found`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := post(t, c, m, "/experiments/new/validate", tc.form, "HX-Request", "true")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d\n%s", resp.StatusCode, tc.status, body)
			}
			wants(t, "the check", body, tc.want...)
		})
	}
	// The form sends it as multipart, as the page's form is.
	resp, body := postMultipart(t, c, m, "/experiments/new/validate", map[string]string{"yaml": "entrypoint: x\nsearcher: {name: single}\n"}, nil)
	if resp.StatusCode != 422 || !strings.Contains(body, `<span class="path">searcher.metric</span>`) {
		t.Fatalf("multipart: %d\n%s", resp.StatusCode, body)
	}
	// A request without the config is bad input, named.
	resp, body = post(t, c, m, "/experiments/new/validate", url.Values{"template": {""}}, "HX-Request", "true")
	if resp.StatusCode != 400 || !strings.Contains(body, "yaml: required") {
		t.Fatalf("no yaml: %d\n%s", resp.StatusCode, body)
	}
}

func TestCodeComesAsFilesOrAPlainTar(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	cfg := "name: files\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n"
	post := func(files map[string][2]string) (*http.Response, string) {
		return postMultipartFiles(t, c, m, "/experiments/new", map[string]string{"yaml": cfg, "paused": "1"}, files)
	}
	resp, body := post(map[string][2]string{"a": {"train.py", "print(1)"}, "b": {"util.py", "x = 1"}})
	id := createdID(t, resp, body)
	_, tgz := get(t, c, m, "/api/v1/experiments/"+itoa(id)+"/model_def")
	if names := strings.Join(tarNames(t, tgz), ","); names != "train.py,util.py" && names != "util.py,train.py" {
		t.Fatalf("the files became %s", names)
	}
	// A file's name is only its base name: it cannot climb out.
	resp, body = post(map[string][2]string{"a": {"../up.py", "x"}})
	id = createdID(t, resp, body)
	if _, tgz := get(t, c, m, "/api/v1/experiments/"+itoa(id)+"/model_def"); strings.Join(tarNames(t, tgz), ",") != "up.py" {
		t.Fatalf("../up.py became %v", tarNames(t, tgz))
	}

	// An uncompressed tar is compressed as it is stored.
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	tw.WriteHeader(&tar.Header{Name: "train.py", Mode: 0o644, Size: 8})
	tw.Write([]byte("print(2)"))
	tw.Close()
	resp, body = postMultipart(t, c, m, "/experiments/new", map[string]string{"yaml": cfg, "paused": "1"}, map[string][2]string{"code": {"code.tar", tarball.String()}})
	id = createdID(t, resp, body)
	if _, tgz := get(t, c, m, "/api/v1/experiments/"+itoa(id)+"/model_def"); strings.Join(tarNames(t, tgz), ",") != "train.py" {
		t.Fatalf("the tar became %v", tarNames(t, tgz))
	}
}

// postMultipartFiles posts a form with each file as a code_files part, as a
// multiple file input sends them.
func postMultipartFiles(t *testing.T, c *http.Client, m *handlerstest.Master, path string, fields map[string]string, files map[string][2]string) (*http.Response, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		w, _ := mw.CreateFormFile("code_files", f[0])
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
