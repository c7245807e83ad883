package proxy

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzSplitPath: whatever the path, splitPath takes the task ID from the
// one segment after /proxy/ and nothing else: it holds no slash, the path
// is exactly /proxy/{id} or /proxy/{id}/{rest}, and TaskID agrees, so the
// task whose owner is checked is the task the request goes to.
func FuzzSplitPath(f *testing.F) {
	for _, seed := range []string{"/proxy/notebook-1/", "/proxy/notebook-1", "/proxy/notebook-1/lab/tree/x.ipynb",
		"/proxy/", "/proxy", "/", "", "/proxy//x", "/proxy/a/../b/", "/proxy/..%2Fb/", "/PROXY/a/", "/x/proxy/a/",
		"/proxy/a%2Fb/c", "/proxy/\x00/", "/proxy/tensorboard-3/data/plugin?x=/proxy/shell-9/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		id, hasRest := splitPath(path)
		if !strings.HasPrefix(path, Prefix) {
			if id != "" || hasRest {
				t.Fatalf("splitPath(%q) = %q, %v outside %s", path, id, hasRest, Prefix)
			}
			return
		}
		if strings.Contains(id, "/") {
			t.Fatalf("splitPath(%q): the ID %q holds a slash", path, id)
		}
		if hasRest && !strings.HasPrefix(path, Prefix+id+"/") || !hasRest && path != Prefix+id {
			t.Fatalf("splitPath(%q) = %q, %v: not the segment after %s", path, id, hasRest, Prefix)
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.URL = &url.URL{Path: path}
		if got := TaskID(r); got != id {
			t.Fatalf("TaskID = %q, splitPath = %q for %q", got, id, path)
		}
	})
}
