package handlers_test

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/harness"
)

// TestThePythonPackageIsServedToAnyoneAsPipAsksForIt reads /python/ and the
// wheel it links without a session, as pip does (which asks for "+" as %2B
// and checks the sha256 the link carries); another name is a 404.
func TestThePythonPackageIsServedToAnyoneAsPipAsksForIt(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	get := func(path string) (int, []byte, http.Header) {
		t.Helper()
		resp, err := http.Get(m.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header
	}
	want, err := harness.BuildWheel(resolute.Version)
	if err != nil {
		t.Fatal(err)
	}
	code, page, _ := get("/python/")
	link := regexp.MustCompile(`href="([^"#]+)#sha256=([0-9a-f]{64})"`).FindSubmatch(page)
	if code != 200 || link == nil || string(link[1]) != want.Name || string(link[2]) != want.SHA256 {
		t.Fatalf("/python/: %d\n%s", code, page)
	}
	for _, path := range []string{"/python/" + want.Name, "/python/" + strings.ReplaceAll(want.Name, "+", "%2B")} {
		code, body, h := get(path)
		if code != 200 || !bytes.Equal(body, want.Data) || h.Get("Content-Type") != "application/zip" {
			t.Errorf("GET %s: %d, %d bytes (want %d), %s", path, code, len(body), len(want.Data), h.Get("Content-Type"))
		}
	}
	if code, _, _ := get("/python/determined-9.9.9-py3-none-any.whl"); code != 404 {
		t.Errorf("another wheel name: %d, want 404", code)
	}
}
