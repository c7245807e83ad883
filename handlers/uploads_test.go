package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// link is a symbolic link of a test archive.
type link struct{ name, to string }

// archiveOf packs links and then files (name → content) as a tar.gz.
func archiveOf(t *testing.T, files map[string]string, links ...link) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, l := range links {
		tw.WriteHeader(&tar.Header{Name: l.name, Typeflag: tar.TypeSymlink, Linkname: l.to})
	}
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// openUploads counts the master's open files in its upload directory (the
// test master runs in this process): spooled uploads are unlinked at once,
// so open descriptors are what is left of them.
func openUploads(t *testing.T, m *handlerstest.Master) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, m.UploadDir+"/") {
			n++
		}
	}
	return n
}

// nothingLeft waits until no upload file is open, and checks none has a
// name in the upload directory.
func nothingLeft(t *testing.T, m *handlerstest.Master, after string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); openUploads(t, m) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %d upload files are still open", after, openUploads(t, m))
		}
	}
	if entries, _ := os.ReadDir(m.UploadDir); len(entries) > 0 {
		t.Fatalf("after %s, the upload directory holds %v", after, entries)
	}
}

// multipartCreate writes an experiment submission as the CLI does: the
// config, then the context as a file part.
func multipartCreate(w io.Writer, config string, context io.Reader) (string, error) {
	mw := multipart.NewWriter(w)
	mw.WriteField("config", config)
	mw.WriteField("paused", "true")
	part, err := mw.CreateFormFile("context", "context.tar.gz")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(part, context); err != nil {
		return "", err
	}
	return mw.FormDataContentType(), mw.Close()
}

func postBody(m *handlerstest.Master, token, path, contentType string, body io.Reader) (*http.Response, error) {
	req, _ := http.NewRequest("POST", m.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", contentType)
	return http.DefaultClient.Do(req)
}

const pausedConfig = "name: up\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n"

// TestUploadsAreCheckedFromTheirSpoolAndLeaveNothingBehind sends contexts
// the upload check accepts and refuses, through every API route that takes
// one, and a client that goes away mid-upload: each answer is what the
// archive rules say, naming the entry, and no temporary file stays open or
// named.
func TestUploadsAreCheckedFromTheirSpoolAndLeaveNothingBehind(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	good := archiveOf(t, map[string]string{"train.py": "print(1)\n"}, link{"main.py", "train.py"})
	escaping := archiveOf(t, map[string]string{"train.py": "x"}, link{"a", "b/.."}, link{"b", "."})
	throughLink := archiveOf(t, map[string]string{"d/x.py": "x"}, link{"d", "."})
	tests := map[string]struct {
		body        func() (string, io.Reader)
		path        string
		status      int
		wantMessage string
	}{
		"a multipart upload the check accepts": {path: "/api/v1/experiments", status: 200, body: func() (string, io.Reader) {
			var buf bytes.Buffer
			ct, _ := multipartCreate(&buf, pausedConfig, bytes.NewReader(good))
			return ct, &buf
		}},
		"a multipart upload with an escaping chain of links": {path: "/api/v1/experiments", status: 400,
			wantMessage: `context: "a" leads outside the context directory`, body: func() (string, io.Reader) {
				var buf bytes.Buffer
				ct, _ := multipartCreate(&buf, pausedConfig, bytes.NewReader(escaping))
				return ct, &buf
			}},
		"a JSON upload the check accepts": {path: "/api/v1/experiments", status: 200, body: func() (string, io.Reader) {
			return "application/json", strings.NewReader(jsonBody(resolute.CreateExperimentRequest{
				ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: pausedConfig}, ContextTgz: good, Activate: new(bool)}))
		}},
		"a JSON upload with an entry written through a link": {path: "/api/v1/experiments", status: 400,
			wantMessage: `context: "d/x.py": its directory "d" is a link`, body: func() (string, io.Reader) {
				return "application/json", strings.NewReader(jsonBody(resolute.CreateExperimentRequest{
					ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: pausedConfig}, ContextTgz: throughLink}))
			}},
		"a command with an escaping chain of links": {path: "/api/v1/commands", status: 400,
			wantMessage: `context: "a" leads outside the context directory`, body: func() (string, io.Reader) {
				return "application/json", strings.NewReader(jsonBody(resolute.CreateTaskRequest{Entrypoint: []string{"true"}, ContextTgz: escaping}))
			}},
		"a command whose context the check accepts": {path: "/api/v1/commands", status: 200, body: func() (string, io.Reader) {
			return "application/json", strings.NewReader(jsonBody(resolute.CreateTaskRequest{Entrypoint: []string{"cat", "main.py"}, ContextTgz: good}))
		}},
		"a context that is no archive": {path: "/api/v1/experiments", status: 400,
			wantMessage: "context: not a gzipped tar archive", body: func() (string, io.Reader) {
				var buf bytes.Buffer
				ct, _ := multipartCreate(&buf, pausedConfig, strings.NewReader("#!/bin/sh\n"))
				return ct, &buf
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ct, body := tc.body()
			resp, err := postBody(m, token, tc.path, ct, body)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e resolute.ErrorResponse
			json.Unmarshal(data, &e)
			if resp.StatusCode != tc.status || !strings.Contains(e.Error.Message, tc.wantMessage) {
				t.Fatalf("%d %s; want %d %q", resp.StatusCode, data, tc.status, tc.wantMessage)
			}
			nothingLeft(t, m, name)
		})
	}

	// What the check accepts launches: the command reads its context
	// through the archive's link.
	var tr resolute.TaskResponse
	body := jsonBody(resolute.CreateTaskRequest{Entrypoint: []string{"cat", "main.py"}, ContextTgz: good})
	if code := api(t, m, "POST", "/api/v1/commands", token, body, &tr); code != 200 {
		t.Fatalf("command: %d", code)
	}
	task := waitTask(t, m, token, tr.Task.ID, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	if logs := fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs"); task.ExitCode == nil || *task.ExitCode != 0 || !strings.Contains(logs, "print(1)") {
		t.Fatalf("the command ended %v with logs:\n%s", task.ExitCode, logs)
	}

	// A client that goes away in the middle of its context.
	pr, pw := io.Pipe()
	go func() {
		_, err := multipartCreate(pw, pausedConfig, io.MultiReader(bytes.NewReader(good[:len(good)/2]), &failingReader{}))
		pw.CloseWithError(err)
	}()
	if resp, err := postBody(m, token, "/api/v1/experiments", "multipart/form-data; boundary=x", pr); err == nil {
		resp.Body.Close()
	}
	nothingLeft(t, m, "a client went away")
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("the client went away") }

// TestUploadsBeyondTheLimitWaitTheirTurn lets one upload at a time: a
// second waits, its body unread, until the first is answered, then goes
// through.
func TestUploadsBeyondTheLimitWaitTheirTurn(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{MaxConcurrentUploads: 1})
	token := login(t, m, "admin", "")
	good := archiveOf(t, map[string]string{"train.py": "print(1)\n"})
	since, _ := m.Logs.Since(0, 0)
	seen := int64(0)
	if len(since) > 0 {
		seen = since[len(since)-1].ID
	}

	// The first sends half its context and holds.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	first := make(chan int, 1)
	go func() {
		resp, err := postBody(m, token, "/api/v1/experiments", mw.FormDataContentType(), pr)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	mw.WriteField("config", pausedConfig)
	mw.WriteField("paused", "true")
	part, _ := mw.CreateFormFile("context", "context.tar.gz")
	part.Write(good[:len(good)/2])
	for deadline := time.Now().Add(20 * time.Second); openUploads(t, m) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first upload never started spooling")
		}
	}

	// The second waits its turn.
	second := make(chan int, 1)
	go func() {
		var buf bytes.Buffer
		ct, _ := multipartCreate(&buf, pausedConfig, bytes.NewReader(good))
		resp, err := postBody(m, token, "/api/v1/experiments", ct, &buf)
		if err != nil {
			second <- 0
			return
		}
		resp.Body.Close()
		second <- resp.StatusCode
	}()
	waitLog(t, m, seen, "an upload waits for its turn")
	select {
	case code := <-second:
		t.Fatalf("the second upload was answered (%d) while the first held the only slot", code)
	default:
	}

	// The first ends; the second goes through.
	part.Write(good[len(good)/2:])
	mw.Close()
	pw.Close()
	for name, ch := range map[string]chan int{"first": first, "second": second} {
		select {
		case code := <-ch:
			if code != 200 {
				t.Errorf("the %s upload: %d", name, code)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the %s upload was not answered", name)
		}
	}
	nothingLeft(t, m, "both uploads")
}

// waitLog waits for a line of the master's log after ID seen that holds
// text.
func waitLog(t *testing.T, m *handlerstest.Master, seen int64, text string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		lines, changed := m.Logs.Since(seen, 0)
		for _, l := range lines {
			if strings.Contains(l.Message, text) {
				return
			}
			seen = l.ID
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no log line %q", text)
		}
	}
}

// TestModelDefStreamsTheContextAsUploaded downloads a context of several
// chunks as it was uploaded.
func TestModelDefStreamsTheContextAsUploaded(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7 % 251)
	}
	tgz := archiveOf(t, map[string]string{"train.py": "print(1)\n", "data.bin": string(big)})
	var buf bytes.Buffer
	ct, _ := multipartCreate(&buf, pausedConfig, bytes.NewReader(tgz))
	resp, err := postBody(m, token, "/api/v1/experiments", ct, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var created resolute.ExperimentResponse
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/experiments/%d/model_def", m.URL, created.Experiment.ID), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(got, tgz) {
		t.Fatalf("model_def: %d, %d bytes; want the %d uploaded", resp.StatusCode, len(got), len(tgz))
	}
}

// TestAFormUploadOfManyFilesHoldsAFewFilesOpen sends the new-experiment form with
// 5,000 files chosen, a code_files part each as a multiple file input sends
// them: the master packs them as they come and holds a few temporary files
// however many there are (it held one per part until the request ended,
// and 20,000 empty parts ran it out of file descriptors), and the
// experiment gets every file.
func TestAFormUploadOfManyFilesHoldsAFewFilesOpen(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	c := signInPages(t, m, "admin", "")
	openUploads(t, m) // skips here, not in the goroutine, without /proc
	const files = 5000
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("yaml", pausedConfig)
		mw.WriteField("paused", "1")
		for i := range files {
			w, _ := mw.CreateFormFile("code_files", fmt.Sprintf("f%04d.py", i))
			fmt.Fprintf(w, "x = %d\n", i)
		}
		pw.CloseWithError(mw.Close())
	}()

	// The master's open upload files are counted all along the request.
	done, most := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			n = max(n, openUploads(t, m))
			select {
			case <-done:
				most <- n
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	req, _ := http.NewRequest("POST", m.URL+"/experiments/new", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := <-most; n > 3 {
		t.Errorf("the master held %d upload files open at once for one form", n)
	}
	id := createdID(t, resp, string(body))
	_, tgz := get(t, c, m, fmt.Sprintf("/api/v1/experiments/%d/model_def", id))
	if names := tarNames(t, tgz); len(names) != files {
		t.Errorf("the context holds %d files, want %d", len(names), files)
	}
	nothingLeft(t, m, "the form")
}
